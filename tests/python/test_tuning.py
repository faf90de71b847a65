"""halo.set_tuning: the core's tuning for every later call (auto's crossovers measured on a GPU by
`halo bench --suite crossovers`, fast's kernel choices), checked strictly, and results unchanged
by it (test_gpu.py checks that it moves auto's choice on a GPU)."""
import numpy as np
import pytest
import scipy.ndimage as ndi

import halo
from support import assert_matches, random_array


@pytest.fixture
def reset_tuning():
    yield
    halo.set_tuning("")


def test_tuning_round_trips_and_resets(reset_tuning):
    assert halo.tuning() == ""
    halo.set_tuning("fft_cost=150,sep_radius_2d=2")
    assert halo.tuning() == "sep_radius_2d=2,fft_cost=150"  # the core's order of fields
    halo.set_tuning("")
    assert halo.tuning() == ""


def test_bad_tunings_are_errors_naming_the_key(reset_tuning):
    halo.set_tuning("box_rows_taps=80")
    with pytest.raises(ValueError, match="unknown key 'nope'"):
        halo.set_tuning("nope=1")
    with pytest.raises(ValueError, match="slots=1: expected 2..16"):
        halo.set_tuning("slots=1")
    with pytest.raises(ValueError, match="KEY=VALUE"):
        halo.set_tuning("sep_radius_2d")
    with pytest.raises(TypeError):
        halo.set_tuning(3)
    assert halo.tuning() == "box_rows_taps=80"  # a refused tuning leaves the last one


def test_results_are_the_same_under_a_tuning(rng, reset_tuning):
    x = random_array(rng, (40, 37), np.float32)
    w = rng.uniform(-1, 1, (5, 5))
    want = (ndi.gaussian_filter(x, 1.5), ndi.correlate(x, w, mode="wrap"))
    for tune in ("", "sep_radius_2d=0,sep_radius_3d=0,fft_cost=1",
                 "sep_radius_2d=64,box_rows_taps=1048576,fft_cost=100000"):
        halo.set_tuning(tune)
        for _ in range(2):  # the second call replayed
            assert_matches(halo.gaussian_filter(x, 1.5), want[0], 4)
            assert_matches(halo.correlate(x, w, mode="wrap"), want[1], 30)


def test_load_profile_sets_the_profiles_tuning(tmp_path, reset_tuning):
    """halo.load_profile reads a profile file (`halo bench --suite crossovers --profile-out`)
    and sets its tuning; what is not a profile is an error naming the file and leaves the last
    tuning."""
    good = tmp_path / "h200.json"
    good.write_text('{"halo_profile": 1, "machine": "m", "tune": "sep_radius_2d=2,fft_cost=74"}')
    assert halo.load_profile(good) == "sep_radius_2d=2,fft_cost=74"
    assert halo.tuning() == "sep_radius_2d=2,fft_cost=74"
    bad = {"text.json": "not json", "other.json": '{"tune": "fft_cost=1"}',
           "format2.json": '{"halo_profile": 2, "tune": ""}',
           "badkey.json": '{"halo_profile": 1, "tune": "nope=1"}'}
    for name, text in bad.items():
        (tmp_path / name).write_text(text)
        with pytest.raises(ValueError, match=name):
            halo.load_profile(str(tmp_path / name))
    with pytest.raises(OSError):
        halo.load_profile(tmp_path / "missing.json")
    assert halo.tuning() == "sep_radius_2d=2,fft_cost=74"
