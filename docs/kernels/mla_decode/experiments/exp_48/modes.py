"""Exp 48: a copy of ring_stores.py for each STORE_MODE, with the number written into its source
(a constant passed through the warp-specialized partitions' arguments did not stay a
compile-time constant in Triton 3.6's Gluon), imported as its own module."""
import importlib.util, os, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
_DIR = tempfile.mkdtemp(prefix="exp48_")


def ring_module(mode: int):
    text = open(os.path.join(HERE, "ring_stores.py")).read()
    text = text.replace("if STORE_MODE == 2:", f"if {mode} == 2:")
    text = text.replace("if STORE_MODE == 1:", f"if {mode} == 1:")
    text = text.replace("STORE_MODE: gl.constexpr = gl.constexpr(0)",
                        f"STORE_MODE: gl.constexpr = gl.constexpr({mode})")
    path = os.path.join(_DIR, f"ring_stores_m{mode}.py")
    with open(path, "w") as f:
        f.write(text)
    spec = importlib.util.spec_from_file_location(f"ring_stores_m{mode}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
