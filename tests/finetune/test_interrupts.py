"""Ctrl+C is not lost: SIGINT during a watch is noted and handed on; a swallowed interrupt ends the job at its next
step with ``INTERRUPTED``."""

import signal
import threading

import pytest

from diagnostics.finetune import _fused, load_config, run_sweep
from diagnostics.finetune._interrupts import raise_if_interrupted, watching_interrupts
from diagnostics.finetune._store import run_state

from _sweeps import write_config


def _swallowed_sigint() -> None:
    """SIGINT whose ``KeyboardInterrupt`` a careless library catches."""
    try:
        signal.raise_signal(signal.SIGINT)
    except KeyboardInterrupt:
        pass


def test_a_sigint_is_handed_on_and_noted_until_the_watch_ends():
    before = signal.getsignal(signal.SIGINT)
    with watching_interrupts():
        raise_if_interrupted()  # nothing came yet
        with pytest.raises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGINT)  # Python's own handler still raises at once
        with pytest.raises(KeyboardInterrupt, match="lost on its way"):
            raise_if_interrupted()
        with pytest.raises(KeyboardInterrupt, match="lost on its way"):
            raise_if_interrupted()  # until the watch ends
    assert signal.getsignal(signal.SIGINT) is before
    raise_if_interrupted()  # a new watch starts clean


def test_the_handler_before_the_watch_still_gets_the_signal():
    calls = []
    before = signal.signal(signal.SIGINT, lambda signum, frame: calls.append(signum))
    try:
        with watching_interrupts():
            with watching_interrupts():  # nested: one handler in front, not two
                signal.raise_signal(signal.SIGINT)
                assert calls == [signal.SIGINT]
                with pytest.raises(KeyboardInterrupt):
                    raise_if_interrupted()
            with pytest.raises(KeyboardInterrupt):
                raise_if_interrupted()
        assert signal.getsignal(signal.SIGINT).__name__ == "<lambda>"
    finally:
        signal.signal(signal.SIGINT, before)


def test_an_ignored_sigint_stays_ignored_and_a_thread_runs_unwatched():
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with watching_interrupts():
            assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN
            signal.raise_signal(signal.SIGINT)
            raise_if_interrupted()
    finally:
        signal.signal(signal.SIGINT, before)
    seen = []

    def in_a_thread():
        with watching_interrupts():
            seen.append(signal.getsignal(signal.SIGINT))

    thread = threading.Thread(target=in_a_thread)
    thread.start()
    thread.join()
    assert seen == [signal.default_int_handler]


def test_an_interrupt_a_library_swallowed_ends_the_job_at_its_next_step(tmp_path, tiny_model_dir, monkeypatch):
    """Without the watch the run would train to its end and read ``done``."""
    steps = []
    real_step = _fused._train_step

    def step_that_swallows_sigint(*args, **kwargs):
        steps.append(len(steps))
        if len(steps) == 2:
            _swallowed_sigint()
        return real_step(*args, **kwargs)

    monkeypatch.setattr(_fused, "_train_step", step_that_swallows_sigint)
    config = load_config(write_config(tmp_path, tiny_model_dir, languages=["en"], seeds=[0], train_size=32,
                                      max_epochs=3))
    with pytest.raises(KeyboardInterrupt, match="lost on its way"):
        run_sweep(config)
    run = tmp_path / "runs" / "s" / "en" / "tiny" / "seed=0"
    assert len(steps) == 2  # stopped after the step that swallowed it, not at the end (6 steps)
    assert "SIGINT" in (run / "INTERRUPTED").read_text() and not (run / "FAILED").exists()
    assert run_state(run) == "interrupted"
