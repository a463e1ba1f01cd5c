"""The console entry: status codes as sys.exit gives them, atexit handlers run, output flushed, fast exit."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from lensbench.core.version import __version__


def _py(code: str, **env) -> subprocess.CompletedProcess:
    import os

    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=120)


def test_version_status_zero_and_atexit_handlers_run_before_the_process_ends():
    r = _py("""
        import atexit
        atexit.register(lambda: print("atexit ran", flush=False))
        from lensbench.cli.entry import main
        main(["--version"])
        print("not reached")
    """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [__version__, "atexit", "ran"]


def test_bad_input_keeps_status_two_and_the_error_line():
    r = _py("from lensbench.cli.entry import main; main(['export', '/no/such/run'])")
    assert r.returncode == 2
    assert r.stderr.startswith("error:")


def test_large_buffered_output_is_flushed_into_a_pipe():
    r = _py("""
        import sys
        from lensbench.cli.entry import exit_now
        sys.stdout.write("x" * 1_000_000)
        exit_now(0)
    """)
    assert r.returncode == 0 and len(r.stdout) == 1_000_000


def test_fast_exit_skips_object_finalisers_but_slow_exit_runs_them():
    code = """
        class Noisy:
            def __del__(self):
                print("finalised")
        keep = Noisy()
        from lensbench.cli.entry import exit_now
        exit_now(None)
    """
    assert _py(code).stdout == ""
    assert _py(code, LENSBENCH_SLOW_EXIT="1").stdout == "finalised\n"


def test_other_threads_alive_means_a_normal_exit_that_waits_for_them():
    r = _py("""
        import threading, time
        def late():
            time.sleep(0.3)
            print("thread finished")
        threading.Thread(target=late).start()
        from lensbench.cli.entry import exit_now
        exit_now("bye")
    """)
    assert r.returncode == 1 and r.stderr.strip() == "bye" and r.stdout == "thread finished\n"


def test_pydantic_plugins_not_looked_up_unless_asked():
    code = """
        import sys
        sys.argv = ["lensbench", "--version"]
        import atexit, os
        atexit.register(lambda: print("plugins:", os.environ.get("PYDANTIC_DISABLE_PLUGINS")))
        from lensbench.cli.entry import main
        main()
    """
    import os

    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env,
                       timeout=120)
    assert r.stdout.split()[-2:] == ["plugins:", "__all__"]
    assert _py(code, PYDANTIC_DISABLE_PLUGINS="").stdout.split()[-1] == "plugins:"
