"""reason.normalize: agent-challenge's reason-code normalizer and retry classifier."""

from conformance.mutation.mutants import Mutant

SURFACE = "reason.normalize"


def _m(slug: str, find: str, replace: str, bug: str, equivalent: str | None = None) -> Mutant:
    return Mutant(slug, SURFACE, f"{__package__}.reference", find, replace, bug, equivalent)


MUTANTS = [
    _m("not-stripped", "stripped = value.strip()", "stripped = value",
       "the value not stripped before it is looked up"),
    _m("blank-is-a-code", "    if not stripped:\n        return None\n", "",
       "an all-whitespace value normalized to the empty code instead of none"),
    _m("case-sensitive", "lowered = stripped.lower()", "lowered = stripped",
       "codes looked up case-sensitively"),
    _m("casefold", "lowered = stripped.lower()", "lowered = stripped.casefold()",
       "case folded (ß becomes ss) instead of lowercased"),
    _m("hyphens-kept", 'underscored = "_".join(lowered.replace("-", "_").split())',
       'underscored = "_".join(lowered.split())', "hyphens not turned into underscores"),
    _m("spaces-one-by-one", 'underscored = "_".join(lowered.replace("-", "_").split())',
       'underscored = lowered.replace("-", "_").replace(" ", "_")',
       "each space replaced on its own: runs of whitespace not collapsed, tabs and newlines kept"),
    _m("compact-ascii-only", 'compact = "".join(c for c in lowered if c.isalnum())',
       'compact = "".join(c for c in lowered if c.isascii() and c.isalnum())',
       "the compact form keeps ASCII letters and digits only (str.isalnum is Unicode-wide)"),
    _m("compact-keeps-underscores", 'compact = "".join(c for c in lowered if c.isalnum())',
       'compact = "".join(c for c in lowered if c.isalnum() or c == "_")',
       "the compact form keeps underscores (it is letters and digits only)"),
    _m("aliases-by-compact-only", "alias = ALIASES.get(compact) or ALIASES.get(underscored)",
       "alias = ALIASES.get(compact)", "aliases looked up by the compact form only",
       equivalent="every alias key but one is also the compact form of its underscored spelling; the one that "
                  "is not (submission_code_failure) holds 'submission' and 'code', so the keyword rule gives "
                  "it the same code"),
    _m("markers-agent-first",
       '    (("cancellederror", "cancelederror"), "harbor_cancelled_error"),\n'
       '    (("environmentstarttimeouterror",), "harbor_environment_start_timeout_error"),\n'
       '    (("agenttimeouterror",), "harbor_agent_timeout_error"),\n',
       '    (("agenttimeouterror",), "harbor_agent_timeout_error"),\n'
       '    (("cancellederror", "cancelederror"), "harbor_cancelled_error"),\n'
       '    (("environmentstarttimeouterror",), "harbor_environment_start_timeout_error"),\n',
       "the error names inside a message tried in another order (a map without order)"),
    _m("one-l-cancelled-missed", '(("cancellederror", "cancelederror"), "harbor_cancelled_error")',
       '(("cancellederror",), "harbor_cancelled_error")',
       "the American spelling CanceledError not recognised"),
    _m("keywords-on-compact", "return _by_keywords(lowered) or underscored or lowered",
       "return _by_keywords(compact) or underscored or lowered",
       "the keyword rules read the compact form, where 'connection refused' has lost its space"),
    _m("keywords-on-underscored", "return _by_keywords(lowered) or underscored or lowered",
       "return _by_keywords(underscored) or underscored or lowered",
       "the keyword rules read the underscored form"),
    _m("empty-before-missing",
       '    if "reward" in lowered and "missing" in lowered:\n        return "harbor_reward_missing"\n'
       '    if "reward" in lowered and "empty" in lowered:\n        return "harbor_reward_empty"\n',
       '    if "reward" in lowered and "empty" in lowered:\n        return "harbor_reward_empty"\n'
       '    if "reward" in lowered and "missing" in lowered:\n        return "harbor_reward_missing"\n',
       "'empty' tested before 'missing' in a message about a reward"),
    _m("malformed-not-parse", 'if "reward" in lowered and ("parse" in lowered or "malformed" in lowered):',
       'if "reward" in lowered and "parse" in lowered:', "'malformed' not read as a reward parse error"),
    _m("runtime-not-submission", 'if "submission" in lowered and ("code" in lowered or "runtime" in lowered):',
       'if "submission" in lowered and "code" in lowered:', "'submission ... runtime' not read as a code failure"),
    _m("reset-not-connection", 'if "connection refused" in lowered or "connection reset" in lowered:',
       'if "connection refused" in lowered:', "'connection reset' not read as a broker connection failure"),
    _m("fallback-lowered", "return _by_keywords(lowered) or underscored or lowered",
       "return _by_keywords(lowered) or lowered", "an unknown value kept as lowercased, not underscored"),
    _m("final-attempt-off-by-one", "if attempt_number >= FINAL_ATTEMPT:", "if attempt_number > FINAL_ATTEMPT:",
       "the third attempt still retried"),
    _m("attempts-as-integers", "if attempt_number >= FINAL_ATTEMPT:", "if attempt_number > FINAL_ATTEMPT - 1:",
       "the attempt number compared as an integer (> 2), so attempt 2.5 is final",
       equivalent="the surface's input takes attempt_number as a strict int from 1 to 10, and on ints '>= 3' "
                  "and '> 2' agree"),
    _m("unknown-not-retried", "    return True  # unknown codes are retried", "    return False",
       "unknown codes never retried"),
    _m("code-not-normalized-again", "normalized = normalize(code)", "normalized = code",
       "the classifier uses the code as it is, where the original normalizes it a second time",
       equivalent="normalize is idempotent on its own results: a listed code is found again as itself, and an "
                  "underscored fallback has no whitespace or hyphen left, the same compact form and the same "
                  "letters for the keyword rules, so it comes back unchanged"),
    _m("no-fallback-code", "code = normalize(value) or FALLBACK", "code = normalize(value)",
       "no code at all instead of terminal_bench_failed"),
]
