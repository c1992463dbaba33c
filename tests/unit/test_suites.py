"""`make test`'s runner (tests/suites.py): both lanes run, each lane's output is printed whole
under its heading, the suites after both lanes run too, and one failing suite fails the run."""

from __future__ import annotations

from tests import suites


def test_a_failing_suite_fails_the_run_and_every_suite_still_reports(tmp_path, monkeypatch, capfd):
    for name, body in (("test_fine.py", "def test_fine():\n    pass\n"),
                       ("test_broken.py", "def test_broken():\n    assert 1 == 2\n"),
                       ("test_late.py", "def test_late():\n    pass\n")):
        (tmp_path / name).write_text(body)
    monkeypatch.setattr(suites, "PROJECT", tmp_path)
    monkeypatch.setattr(suites, "LANES", {"service": (("test_fine.py",),), "browser": (("test_broken.py",),)})
    monkeypatch.setattr(suites, "AFTER_BOTH", (("test_late.py",),))
    assert suites.main(["-p", "no:cacheprovider"]) == 1
    out = capfd.readouterr().out
    service, browser, late = (out.index(text) for text in ("the service lane (test_fine.py): passed",
                                                            "the browser lane (test_broken.py): failed (1)",
                                                            "every suite: failed"))
    assert service < out.index("1 passed") < browser < out.index("assert 1 == 2") < late
    assert out.count("1 passed") == 2  # the lane's suite and the one after both


def test_a_lane_goes_on_after_a_failing_suite(tmp_path, monkeypatch, capfd):
    (tmp_path / "test_fine.py").write_text("def test_fine():\n    pass\n")
    (tmp_path / "test_broken.py").write_text("def test_broken():\n    assert 1 == 2\n")
    monkeypatch.setattr(suites, "PROJECT", tmp_path)
    monkeypatch.setattr(suites, "LANES", {"browser": (("test_broken.py",), ("test_fine.py",))})
    monkeypatch.setattr(suites, "AFTER_BOTH", ())
    assert suites.main(["-p", "no:cacheprovider"]) == 1
    out = capfd.readouterr().out
    assert out.index("assert 1 == 2") < out.index("1 passed")  # the second suite ran after the first failed


def test_every_suite_passing_passes_the_run(tmp_path, monkeypatch, capfd):
    (tmp_path / "test_fine.py").write_text("def test_fine():\n    pass\n")
    monkeypatch.setattr(suites, "PROJECT", tmp_path)
    monkeypatch.setattr(suites, "LANES", {"service": (("test_fine.py",), ("test_fine.py",))})
    monkeypatch.setattr(suites, "AFTER_BOTH", ())
    assert suites.main(["-p", "no:cacheprovider"]) == 0
    assert "every suite: passed" in capfd.readouterr().out
