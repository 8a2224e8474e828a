"""Exp 48's variants of the ring kernel, written from kernelopt/kernels/mla/ring.py as it was
then (the shipped kernel, mode 0) by replacing a split piece's partial stores with the block
below, one copy a mode with the number in its source, each imported as its own module.

STORE_MODE: 0 as shipped (four-byte stores from the accumulators' layout); 1 none (wrong by
construction: the stores' bound); 2 staged in the ring's dead memory column-fastest, then
stored 16 bytes a lane along the columns. The number is written into the source because a
constant passed through the warp-specialized partitions' arguments did not stay a
compile-time constant in Triton 3.6's Gluon."""
import importlib.util, os, tempfile

SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "..",
                      "kernelopt", "kernels", "mla", "ring.py")
SHIPPED_STORES = """        p_pc = o_part + o_slot[None, :] * D_NOPE + o_c[:, None]
        gl.store(p_pc, b0 * w_a + x0 * w_b, mask=m_cr)
        gl.store(p_pc + 64, b1 * w_a + x1 * w_b, mask=m_cr)
        gl.store(p_pc + 128, b2 * w_a + x2 * w_b, mask=m_cr)
        gl.store(p_pc + 192, b3 * w_a + x3 * w_b, mask=m_cr)
"""
STORES_BY_MODE = """        if STORE_MODE == 2:
            # Every lane has loaded its x parts: the parts the other consumer handed over
            # (only this consumer reads them) become this consumer's staging memory, laid
            # out column-fastest ([row][column] in memory, as the partial is in global).
            gl.thread_barrier()
            col_fast: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, [0, 1])
            st0 = xch.index(4 - 4 * G)._reinterpret(gl.float32, [64, 16], col_fast)
            st1 = xch.index(5 - 4 * G)._reinterpret(gl.float32, [64, 16], col_fast)
            st2 = xch.index(6 - 4 * G)._reinterpret(gl.float32, [64, 16], col_fast)
            st3 = xch.index(7 - 4 * G)._reinterpret(gl.float32, [64, 16], col_fast)
            st0.store(b0 * w_a + x0 * w_b)
            st1.store(b1 * w_a + x1 * w_b)
            st2.store(b2 * w_a + x2 * w_b)
            st3.store(b3 * w_a + x3 * w_b)
            gl.thread_barrier()
            # Four columns a lane, sixteen lanes along a row: 16-byte stores, whole lines.
            blk: gl.constexpr = gl.BlockedLayout([4, 1], [16, 2], [1, 4], [0, 1])
            s_c = 256 * G + gl.arange(0, 64, layout=gl.SliceLayout(1, blk))
            s_r = i_m * 16 + gl.arange(0, 16, layout=gl.SliceLayout(0, blk))
            p_st = o_part + (i_slot.to(gl.int64) * ROWS + s_r)[None, :] * D_NOPE + s_c[:, None]
            m_st = (s_r < ROWS)[None, :] & (s_c < D_NOPE)[:, None]
            gl.store(p_st, st0.load(blk), mask=m_st)
            gl.store(p_st + 64, st1.load(blk), mask=m_st)
            gl.store(p_st + 128, st2.load(blk), mask=m_st)
            gl.store(p_st + 192, st3.load(blk), mask=m_st)
        else:
            if STORE_MODE == 1:
                m_cr = m_cr & False
            p_pc = o_part + o_slot[None, :] * D_NOPE + o_c[:, None]
            gl.store(p_pc, b0 * w_a + x0 * w_b, mask=m_cr)
            gl.store(p_pc + 64, b1 * w_a + x1 * w_b, mask=m_cr)
            gl.store(p_pc + 128, b2 * w_a + x2 * w_b, mask=m_cr)
            gl.store(p_pc + 192, b3 * w_a + x3 * w_b, mask=m_cr)
"""
_DIR = tempfile.mkdtemp(prefix="exp48_")


def ring_module(mode: int):
    text = open(SOURCE).read()
    assert text.count(SHIPPED_STORES) == 1, "ring.py is not the kernel exp 48 edited"
    text = text.replace(SHIPPED_STORES, STORES_BY_MODE.replace("STORE_MODE", str(mode)))
    path = os.path.join(_DIR, f"ring_stores_m{mode}.py")
    with open(path, "w") as f:
        f.write(text)
    spec = importlib.util.spec_from_file_location(f"ring_stores_m{mode}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
