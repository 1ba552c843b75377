"""reason.normalize: agent-challenge's reason-code normalizer and retry classifier."""

from conformance.mutation.mutants import Mutant

SURFACE = "reason.normalize"


def _m(slug: str, find: str, replace: str, bug: str, equivalent: str | None = None) -> Mutant:
    return Mutant(slug, SURFACE, f"{__package__}.reference", find, replace, bug, equivalent)


_TEXT = "text = value.strip().lower()"
_JOINED = 'joined = "_".join(text.replace("-", "_").split())'
_LETTERS = 'letters = "".join(ch for ch in text if ch.isalnum())'
_CANCELLED = ('    "cancellederror": "harbor_cancelled_error",\n'
              '    "cancelederror": "harbor_cancelled_error",\n')
_ENVIRONMENT = '    "environmentstarttimeouterror": "harbor_environment_start_timeout_error",\n'
_AGENT = '    "agenttimeouterror": "harbor_agent_timeout_error",\n'
_MISSING = '        if has("missing"):\n            return "harbor_reward_missing"\n'
_EMPTY = '        if has("empty"):\n            return "harbor_reward_empty"\n'
_WORDS = "            or _from_words(text)  # step 4"
_LAST = "            or joined)  # step 5"

MUTANTS = [
    _m("not-stripped", _TEXT, "text = value.lower()",
       "the value not stripped before it is looked up"),
    _m("blank-is-a-code", "    if not text:\n        return None\n", "",
       "an all-whitespace value normalized to the empty code instead of none"),
    _m("case-sensitive", _TEXT, "text = value.strip()",
       "codes looked up case-sensitively"),
    _m("casefold", _TEXT, "text = value.strip().casefold()",
       "case folded (ß becomes ss) instead of lowercased"),
    _m("hyphens-kept", _JOINED, 'joined = "_".join(text.split())', "hyphens not turned into underscores"),
    _m("spaces-one-by-one", _JOINED, 'joined = text.replace("-", "_").replace(" ", "_")',
       "each space replaced on its own: runs of whitespace not collapsed, tabs and newlines kept"),
    _m("compact-ascii-only", _LETTERS, 'letters = "".join(ch for ch in text if ch.isascii() and ch.isalnum())',
       "the compact form keeps ASCII letters and digits only (str.isalnum is Unicode-wide)"),
    _m("compact-keeps-underscores", _LETTERS, 'letters = "".join(ch for ch in text if ch.isalnum() or ch == "_")',
       "the compact form keeps underscores (it is letters and digits only)"),
    _m("aliases-by-compact-only", "_ALIASES.get(joined) or _RUN_TOGETHER.get(letters)",
       "_RUN_TOGETHER.get(letters)", "aliases looked up by the compact form only",
       equivalent="every alias but one is also found run together, by its letters; the one that is not "
                  "(submission_code_failure) holds 'submission' and 'code', so the keyword rule gives it the "
                  "same code"),
    _m("markers-agent-first", _CANCELLED + _ENVIRONMENT + _AGENT, _AGENT + _CANCELLED + _ENVIRONMENT,
       "the error names inside a message tried in another order (a map without order)"),
    _m("one-l-cancelled-missed", _CANCELLED, '    "cancellederror": "harbor_cancelled_error",\n',
       "the American spelling CanceledError not recognised"),
    _m("keywords-on-compact", _WORDS, "            or _from_words(letters)  # step 4",
       "the keyword rules read the compact form, where 'connection refused' has lost its space"),
    _m("keywords-on-underscored", _WORDS, "            or _from_words(joined)  # step 4",
       "the keyword rules read the underscored form"),
    _m("empty-before-missing", _MISSING + _EMPTY, _EMPTY + _MISSING,
       "'empty' tested before 'missing' in a message about a reward"),
    _m("malformed-not-parse", 'if has("parse") or has("malformed"):', 'if has("parse"):',
       "'malformed' not read as a reward parse error"),
    _m("runtime-not-submission", 'if has("submission") and (has("code") or has("runtime")):',
       'if has("submission") and has("code"):', "'submission ... runtime' not read as a code failure"),
    _m("reset-not-connection", ' or has("connection reset"):', ":",
       "'connection reset' not read as a broker connection failure"),
    _m("fallback-lowered", _LAST, "            or text)  # step 5",
       "an unknown value kept as lowercased, not underscored"),
    _m("final-attempt-off-by-one", "if attempt_number >= LAST_TRY:", "if attempt_number > LAST_TRY:",
       "the third attempt still retried"),
    _m("attempts-as-integers", "if attempt_number >= LAST_TRY:", "if attempt_number > LAST_TRY - 1:",
       "the attempt number compared as an integer (> 2), so attempt 2.5 is final",
       equivalent="the surface's input takes attempt_number as a strict int from 1 to 10, and on ints '>= 3' "
                  "and '> 2' agree"),
    _m("unknown-not-retried", "    return TRIED_AGAIN.get(again, True)", "    return TRIED_AGAIN.get(again, False)",
       "unknown codes never retried"),
    _m("code-not-normalized-again", "again = normalize(code) or code", "again = code",
       "the classifier uses the code as it is, where the original normalizes it a second time",
       equivalent="normalize is idempotent on its own results: a listed code is found again as itself, and an "
                  "underscored fallback has no whitespace or hyphen left, the same compact form and the same "
                  "letters for the keyword rules, so it comes back unchanged"),
    _m("no-fallback-code", "code = normalize(value) or NO_CODE", "code = normalize(value)",
       "no code at all instead of terminal_bench_failed"),
]
