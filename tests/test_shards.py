"""certify --shard I/N splits a run; conformance combine puts it back together, or says what is wrong."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conformance.cli.app import app
from conformance.corpus import cases as case_corpus
from conformance.errors import UsageError
from conformance.report import reader as report
from conformance.run import certification
from conformance.run.shards import Shard

ALL = case_corpus.select(certification.load_corpus(case_corpus.default_root()),
                                       harbor_version="0.13.1")


def test_shard_specs():
    assert Shard.parse("2/4") == Shard(2, 4) and str(Shard(2, 4)) == "2/4"
    for bad in ("0/4", "5/4", "2", "a/b", "2/0"):
        with pytest.raises(UsageError, match="I/N"):
            Shard.parse(bad)


def test_every_case_falls_to_exactly_one_shard_and_each_gets_some():
    for count in (2, 3, 5):
        shards = [Shard(i, count) for i in range(1, count + 1)]
        owners = [[s for s in shards if s.takes(item.id)] for item in ALL]
        assert all(len(o) == 1 for o in owners)
        sizes = [sum(1 for o in owners if o[0] == s) for s in shards]
        assert min(sizes) > len(ALL) / count / 2  # roughly even: none gets less than half its share


def test_shard_seeds_and_budgets():
    seeds = {Shard(i, 4).seed(0) for i in range(1, 5)}
    assert len(seeds) == 4 and Shard(1, 4).seed(0) == Shard(1, 4).seed(0) != Shard(1, 4).seed(1)
    assert Shard(1, 4).budget(250) == 63 and Shard(4, 4).budget(8) == 2


def run_shards(tmp_path: Path, count: int, **options) -> list[Path]:
    paths = []
    for i in range(1, count + 1):
        path = tmp_path / f"shard-{i}.jsonl"
        run = certification.certify(certification.Options(candidate="reference", oracle="recorded",
                                                           shard=Shard(i, count), **options), path)
        assert run.conforms
        paths.append(path)
    return paths


@pytest.fixture(scope="module")
def three_shards(tmp_path_factory) -> list[Path]:
    """One sharded run in three parts, made once: each test works on its own copy."""
    return run_shards(tmp_path_factory.mktemp("shards"), 3)


@pytest.fixture(scope="module")
def three_small_shards(tmp_path_factory) -> list[Path]:
    """The same on one surface's cases: enough for what combine refuses, and quick."""
    return run_shards(tmp_path_factory.mktemp("small-shards"), 3, surfaces=["reason.normalize"])


def _copies(paths: list[Path], folder: Path) -> list[Path]:
    copies = [folder / path.name for path in paths]
    for path, copy in zip(paths, copies, strict=True):
        copy.write_bytes(path.read_bytes())
    return copies


@pytest.fixture
def shard_reports(three_shards, tmp_path) -> list[Path]:
    return _copies(three_shards, tmp_path)


@pytest.fixture
def small_shard_reports(three_small_shards, tmp_path) -> list[Path]:
    return _copies(three_small_shards, tmp_path)


def combine(*paths: Path, out: Path):
    return CliRunner().invoke(app, ["combine", *map(str, paths), "--out", str(out)])


@pytest.mark.slow
def test_shards_combined_are_the_whole_run(tmp_path, shard_reports):
    paths = shard_reports
    parts = [report.read(p) for p in paths]
    assert sum(len(p.records) for p in parts) == len(ALL)
    result = combine(*paths, out=tmp_path / "all.jsonl")
    assert result.exit_code == 0, result.output
    combined = report.read(tmp_path / "all.jsonl")
    assert sorted(r.id for r in combined.records) == sorted(i.id for i in ALL)
    assert combined.footer.total == len(ALL) and combined.footer.conforms is True
    assert [c.shard for c in combined.header.combined] == ["1/3", "2/3", "3/3"]


def _edit(path: Path, change) -> None:
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    path.write_text("".join(json.dumps(line) + "\n" for line in change(lines)))


@pytest.mark.parametrize(("damage", "said"), [
    ("twice", "given twice"),
    ("missing-shard", "missing shard(s): 3/3"),
    ("duplicate-case", "is in"),
    ("missing-case", "no record of 1 case(s) it was given"),
    ("unfinished", "did not finish"),
    ("not-a-shard", "not a shard's report"),
    ("other-comparator", "comparator is '1.1'"),  # its classes mean something else
])
def test_combine_refuses_what_is_not_one_run(tmp_path, small_shard_reports, damage, said):
    one, two, three = small_shard_reports
    paths = [one, two, three]
    first_case = next(r for r in report.read(one).records).to_json()
    if damage == "twice":
        paths = [one, two, two, three]
    elif damage == "missing-shard":
        paths = [one, two]
    elif damage == "duplicate-case":
        _edit(two, lambda lines: lines[:-1] + [first_case, lines[-1]])
    elif damage == "missing-case":
        _edit(two, lambda lines: [lines[0], *lines[2:]])
    elif damage == "unfinished":
        _edit(three, lambda lines: lines[:-1])
    elif damage == "not-a-shard":
        _edit(three, lambda lines: [{**lines[0], "shard": None}, *lines[1:]])
    elif damage == "other-comparator":
        _edit(three, lambda lines: [{**lines[0], "comparator": "1.1"}, *lines[1:]])
    result = combine(*paths, out=tmp_path / "all.jsonl")
    assert result.exit_code == 2 and said in result.output
    if damage == "missing-case":
        assert json.loads((tmp_path / "shard-2.jsonl").read_text().splitlines()[0])["shard"]["cases"][0] \
            in result.output  # the missing case is named
    assert not (tmp_path / "all.jsonl").exists()


@pytest.mark.usefixtures("harbor_env")  # certify connects the live oracle before it checks the seed
def test_a_random_seed_profile_needs_a_seed_to_shard(tmp_path):
    with pytest.raises(certification.UsageError, match="needs --seed"):
        certification.certify(certification.Options(candidate="reference", profile="explore",
                                                     shard=Shard(1, 2)), tmp_path / "r.jsonl")


@pytest.mark.usefixtures("harbor_env")
def test_generators_are_split_by_seed_and_budget(tmp_path):
    paths = []
    for i in (1, 2):
        path = tmp_path / f"g{i}.jsonl"
        certification.certify(certification.Options(candidate="reference", surfaces=["evsys.metric"],
                                                     no_cases=True, profile="ci", max_examples=30,
                                                     shard=Shard(i, 2)), path)
        paths.append(path)
    lines = [report.read(p).generated[0] for p in paths]
    assert lines[0].seed != lines[1].seed and [g.max_examples for g in lines] == [15, 15]
    result = combine(*paths, out=tmp_path / "all.jsonl")
    assert result.exit_code == 0, result.output
    merged = report.read(tmp_path / "all.jsonl").generated[0]
    assert merged.inputs_run == lines[0].inputs_run + lines[1].inputs_run
    assert merged.seed == [lines[0].seed, lines[1].seed]


def test_merged_generators_keep_each_finding_once_and_sum_each_surface():
    from conformance.core.outcomes import Outcome
    from conformance.report.model import CaseLine, GeneratedLine
    from conformance.run.shards import MergedGenerators

    def finding(case_id: str, surface: str = "pass_at_k") -> CaseLine:
        return CaseLine(id=case_id, surface=surface, outcome=Outcome.FAIL, origin="generated", input=None)

    def line(seed: int, found: list[str], **more) -> GeneratedLine:
        return GeneratedLine(surface="pass_at_k", profile="explore", seed=seed, max_examples=10, inputs_run=12,
                             divergences=found, **more)

    merged = MergedGenerators()
    assert [merged.finding(f) for f in (finding("a"), finding("b"), finding("a"))] == [True, True, False]
    merged.generator(line(1, ["a", "b"]))
    merged.generator(line(2, ["a"], skipped=2, skip_reason="declined", error="flaky"))
    merged.generator(line(3, [], skipped=1, skip_reason="other", error="broken"))
    (only,) = merged.lines()
    assert (only.seed, only.inputs_run, only.max_examples, only.divergences) == ([1, 2, 3], 36, 30, ["a", "b"])
    assert (only.skipped, only.skip_reason, only.error) == (3, "declined", "flaky; broken")
    assert [r.id for r in merged.of("pass_at_k")] == ["a", "b"] and merged.of("reward.parse") == []
