"""One bug: the keys sorted, as a reimplementation that reads them back from a sorted map would give them."""

from conformance.mutation.mutants import Mutant

MUTANTS = [
    Mutant("sorted-keys", "toy.reward_keys", f"{__package__}.reference", 'list(request["rewards"])',
           'sorted(request["rewards"])', "the keys sorted instead of in the order given"),
]
