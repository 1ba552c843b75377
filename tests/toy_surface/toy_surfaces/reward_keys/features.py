"""The toy surface's input features: a surface from outside the package declares them as the suite's do."""

from conformance.core.features import Feature

FEATURES = (
    # Two keys or more: only then can an implementation get their order wrong.
    Feature("several keys", "a rewards dict of two keys or more", lambda value: len(value["rewards"]) >= 2,
            minimum={"ci": 0.2}),
)
