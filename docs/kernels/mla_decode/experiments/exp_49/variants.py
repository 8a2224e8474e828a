"""Exp 49's two variants of the seesaw kernel, written from kernelopt/kernels/mla/seesaw.py as
it was then (the kernel before them) by replacing the lines below, and imported as modules."""
import importlib.util, os, tempfile

SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "..",
                      "kernelopt", "kernels", "mla", "seesaw.py")
READ_AFTER_FLAG = "            other = 2 * gl.load(split_offsets + i_b) + 1 - i_slot\n"
WAIT = ('        if second:\n'
        '            # The other piece\'s partial and LSE are published once its release add lands.\n')
EDITS = {
    # The pair's slots are adjacent and its first piece starts at key 0.
    "first_key": [(READ_AFTER_FLAG,
                   "            other = i_slot + 1 - 2 * (key_start != 0).to(gl.int32)\n")],
    # The same table read, issued before the wait for the flag instead of after it.
    "hoisted": [(WAIT, WAIT.replace("        if second:\n", "        if second:\n"
                                    "            first_slot = gl.load(split_offsets + i_b)\n")),
                (READ_AFTER_FLAG, "            other = 2 * first_slot + 1 - i_slot\n")],
}
_DIR = tempfile.mkdtemp(prefix="exp49_")


def seesaw_variant(name: str):
    text = open(SOURCE).read()
    for old, new in EDITS[name]:
        assert text.count(old) == 1, (name, old)
        text = text.replace(old, new)
    path = os.path.join(_DIR, f"seesaw_{name}.py")
    with open(path, "w") as f:
        f.write(text)
    spec = importlib.util.spec_from_file_location(f"seesaw_{name}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
