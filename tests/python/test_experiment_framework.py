"""plait.experiments.framework: the one `spread`, and the `reproduce()` skeleton that runs a
declared experiment with settings passed in."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pytest
from plait.experiments import Experiment, Options, experiments
from plait.experiments.framework import Declared, reproduce, spread
from plait.report import Claim, Section

NAN = math.nan


def test_spread_formats_as_each_experiment_did():
    values = [0.8312, 0.8345, 0.8401]
    # coupled-basics and parallel-tcp: three decimals for the mean and the sd.
    assert spread(values, fixed=True) == "0.835 ± 0.004 (3 seeds)"
    # mpat, multfrc, mpfast: significant digits, the sd to two.
    assert spread(values) == "0.835 ± 0.0045 (3 seeds)"
    assert spread([1234.5, 1250.0], 4) == "1242 ± 11 (2 seeds)"
    assert spread([0.5]) == "0.5 (1 seed)"
    assert spread([0.5], fixed=True) == "0.500 (1 seed)"


def test_spread_counts_the_seeds_without_a_value():
    """The copies drifted here: coupled-basics' and parallel-tcp's gave "nan ± nan (3 seeds)"
    for one seed without a value, mpat's and multfrc's left it out silently ("(2 seeds)"),
    mpfast's counted it ("2 never"). Every experiment now leaves it out of the mean and says
    so."""
    assert spread([1.0, 2.0, NAN]) == "1.5 ± 0.71 (2 seeds, 1 without a value)"
    assert spread([1.0, 2.0, NAN], fixed=True) == "1.500 ± 0.707 (2 seeds, 1 without a value)"
    assert spread([60.0, NAN, NAN], missing="never") == "60 (1 seed, 2 never)"
    assert spread([NAN, NAN], missing="never") == "never (2 seeds)"
    assert spread([NAN, NAN]) == "no value (2 seeds)"


@dataclass(frozen=True)
class Tiny:
    seeds: list[int] = field(default_factory=lambda: [1, 2, 3])
    level: float = 1.0


def _tiny(seen: list) -> Declared:
    class Summary:
        total, done, reused, failed = 2, 1, 1, 0

    def measure(sc, out, fresh, progress, **where):
        seen.append((sc, out, fresh, where))
        return {"values": [sc.level] * len(sc.seeds)}, {"one": Summary()}

    def claims(data, sc):
        value = data["values"][0]
        return [Claim("level", "here", "1", spread(data["values"]), "exact", value == 1.0, "")]

    return Declared(
        name="tiny",
        title="Tiny",
        paper="nobody",
        settings=lambda options: Tiny(seeds=list(options.seeds)),
        runs=lambda sc: len(sc.seeds),
        measure=measure,
        write=lambda data, sc, out: {},
        claims=(claims,),
        figures=lambda data, sc: [],
        tables=lambda data, sc: [],
        setup=lambda data, sc: f"level {sc.level:g} over {len(sc.seeds)} seeds",
    )


def test_reproduce_uses_the_settings_passed_in(tmp_path):
    seen: list = []
    declared = _tiny(seen)
    options = Options(out=tmp_path, seeds=[1, 2], fresh=True, where={"workers": 1})
    default = reproduce(declared, options)
    assert isinstance(default, Section) and default.setup == "level 1 over 2 seeds"
    assert default.claims[0].agrees and default.runs["seeds"] == "1, 2"
    passed = reproduce(declared, options, Tiny(seeds=[7], level=2.0))
    assert passed.setup == "level 2 over 1 seeds" and not passed.claims[0].agrees
    assert passed.runs["seeds"] == "7" and passed.runs["packet runs"] == 2
    assert [s for s, *_ in seen] == [Tiny([1, 2]), Tiny([7], 2.0)]
    assert seen[0][1:] == (tmp_path / "runs", True, {"workers": 1})


def test_with_settings_replaces_the_choice_for_the_command_line(tmp_path):
    seen: list = []
    declared = _tiny(seen)
    experiment = Experiment(
        name="tiny",
        title="Tiny",
        paper="nobody",
        reproduce=lambda options, settings=None: reproduce(declared, options, settings),
        runs=lambda options, settings=None: declared.runs(settings or declared.settings(options)),
        settings=declared.settings,
    )
    smaller = experiment.with_settings(lambda options: Tiny(seeds=[9], level=3.0))
    options = Options(out=tmp_path, seeds=[1, 2, 3])
    assert experiment.runs(options) == 3 and smaller.runs(options) == 1
    assert smaller.reproduce(options).setup == "level 3 over 1 seeds"


def test_every_experiment_is_declared():
    """Each takes its settings as an argument (no module global to patch); linux-fidelity was
    the last whose tests patched its grid and run length into the module."""
    for name, experiment in experiments().items():
        assert experiment.settings is not None, name
        options = Options(out=None, seeds=[1, 2, 3], quick=True)
        settings = experiment.settings(options)
        assert experiment.runs(options) == experiment.runs(options, settings) > 0, name


def test_an_experiment_without_settings_refuses_them():
    experiment = Experiment("x", "X", "p", reproduce=lambda o: None, runs=lambda o: 0)
    with pytest.raises(ValueError, match="takes no settings"):
        experiment.with_settings(lambda o: None)
