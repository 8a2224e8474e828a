"""Reference MLA decode in torch eager: bmm, fp32 softmax, bmm over the cache gathered densely.

q [b, s_q, h_q, 576] bf16; dense [b, t, 576] bf16 (the paged cache gathered once, outside the
timing); visible [b, s_q * h_q, t] bool, the keys each query row may see (causal among the
s_q draft tokens). Returns out [b, s_q, h_q, 512] in q's dtype.
"""

import torch

SCALE = 192**-0.5  # DeepSeek-V3: (128 nope + 64 rope) ** -0.5


def mla_decode_eager(q, dense, visible):
    b, s_q, h_q, _ = q.shape
    scores = torch.bmm(q.reshape(b, s_q * h_q, 576), dense.transpose(1, 2)).float() * SCALE
    scores = scores.masked_fill(~visible, float("-inf"))
    probs = torch.softmax(scores, dim=-1).to(q.dtype)
    return torch.bmm(probs, dense[..., :512]).reshape(b, s_q, h_q, 512)
