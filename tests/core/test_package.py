"""The package as a library: importing it changes nothing in the process, and its public names resolve."""

import subprocess
import sys


def test_import_leaves_the_process_alone():
    code = (
        "import signal, sys\n"
        "before = (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM), sys.get_int_max_str_digits())\n"
        "import markov_oca\n"
        "markov_oca.solve, markov_oca.Chain, markov_oca.from_matrix\n"
        "after = (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM), sys.get_int_max_str_digits())\n"
        "assert before == after, (before, after)\n"
        "print('same')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "same"


def test_every_public_name_resolves():
    import markov_oca

    for name in markov_oca.__all__:
        assert getattr(markov_oca, name) is not None, name
    assert callable(markov_oca.crosscheck)  # the function, not a module of the same name
