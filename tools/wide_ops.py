"""A right answer to the combine_heads lesson that also runs a wide set of torch and NumPy
operators: linear algebra, FFT, distributions, ``nn`` layers, autograd, an optimiser, more than
one thread. The sandbox's system call allow-list is found by running it (tools/syscalls.py),
and tests/test_sandbox_walls.py checks it passes inside the sandbox."""

import math

import numpy as np
import torch
import torch.nn.functional as F


def _workout() -> None:
    torch.manual_seed(0)
    a = torch.randn(6, 6, dtype=torch.float64)
    spd = a @ a.T + 6 * torch.eye(6, dtype=torch.float64)
    torch.linalg.svd(a)
    torch.linalg.qr(a)
    torch.linalg.eigh(spd)
    torch.linalg.eig(a)
    torch.linalg.inv(spd)
    torch.linalg.solve(spd, a)
    torch.linalg.det(a)
    torch.linalg.cholesky(spd)
    torch.linalg.lstsq(a, a[:, :2])
    torch.linalg.matrix_norm(a)
    torch.linalg.pinv(a)
    x = torch.randn(4, 16)
    torch.fft.ifft(torch.fft.fft(x))
    torch.fft.irfft(torch.fft.rfft(x))
    torch.fft.fft2(x)
    torch.stft(torch.randn(256), n_fft=32, return_complex=True, window=torch.hann_window(32))
    d = torch.distributions
    for dist in (
        d.Normal(0.0, 1.0),
        d.Categorical(logits=torch.randn(5)),
        d.MultivariateNormal(torch.zeros(3), torch.eye(3)),
        d.Dirichlet(torch.ones(4)),
        d.Gamma(2.0, 1.0),
        d.Beta(2.0, 3.0),
        d.Bernoulli(0.3),
        d.Poisson(3.0),
    ):
        dist.log_prob(dist.sample((3,)))
    torch.multinomial(torch.ones(10), 3)
    torch.randperm(10)
    layers = torch.nn.Sequential(
        torch.nn.Conv2d(1, 2, 3, padding=1),
        torch.nn.BatchNorm2d(2),
        torch.nn.ReLU(),
        torch.nn.MaxPool2d(2),
        torch.nn.Flatten(),
        torch.nn.Dropout(0.1),
        torch.nn.Linear(2 * 4 * 4, 5),
    )
    image = torch.randn(3, 1, 8, 8)
    optimiser = torch.optim.Adam(layers.parameters(), lr=0.01)
    loss = F.cross_entropy(layers(image), torch.tensor([0, 1, 2]))
    loss.backward()
    optimiser.step()
    torch.optim.SGD(layers.parameters(), lr=0.1, momentum=0.9).step()
    sequence = torch.randn(2, 5, 4)
    torch.nn.LSTM(4, 3, batch_first=True)(sequence)
    torch.nn.GRU(4, 3, batch_first=True)(sequence)
    torch.nn.MultiheadAttention(4, 2, batch_first=True)(sequence, sequence, sequence)
    torch.nn.TransformerEncoderLayer(4, 2, dim_feedforward=8, batch_first=True)(sequence)
    torch.nn.Embedding(10, 4)(torch.tensor([1, 2, 3]))
    torch.nn.LayerNorm(4)(sequence)
    F.conv1d(torch.randn(1, 2, 10), torch.randn(3, 2, 3))
    F.interpolate(image, scale_factor=2, mode="bilinear", align_corners=False)
    w = torch.randn(3, requires_grad=True)
    (g,) = torch.autograd.grad((w**3).sum(), w, create_graph=True)
    g.sum().backward()
    torch.autograd.functional.jacobian(lambda v: v.sin() * v, torch.randn(3))
    torch.autograd.functional.hessian(lambda v: (v**3).sum(), torch.randn(3))
    with torch.no_grad():
        torch.sort(torch.randn(100))
        torch.topk(torch.randn(100), 5)
        torch.cumsum(torch.randn(100), 0)
        torch.unique(torch.randint(0, 5, (50,)))
        torch.where(torch.randn(10) > 0, 1.0, -1.0)
        torch.einsum("ij,jk->ik", a, a)
        torch.tensor([1.0, 2.0]).to(torch.float16).to(torch.bfloat16).to(torch.complex64)
    # More than one thread: a learner may ask for them.
    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    torch.randn(256, 256) @ torch.randn(256, 256)
    torch.set_num_threads(threads)
    rng = np.random.default_rng(0)
    m = rng.standard_normal((6, 6))
    np.linalg.svd(m)
    np.linalg.inv(m @ m.T + 6 * np.eye(6))
    np.linalg.eig(m)
    np.fft.irfft(np.fft.rfft(m))
    np.einsum("ij,jk->ik", m, m)
    np.sort(rng.integers(0, 100, 50))
    np.random.seed(0)
    np.random.rand(3)
    torch.from_numpy(m).numpy()


def solve(Q, K, V):
    _workout()
    q, k, v = (torch.tensor(x, dtype=torch.float64) for x in (Q, K, V))
    scores = torch.einsum("htd,hsd->hts", q, k) / math.sqrt(q.shape[-1])
    out = torch.bmm(F.softmax(scores, dim=-1), v)
    assert torch.allclose(out, F.scaled_dot_product_attention(q, k, v))
    return out.permute(1, 0, 2).reshape(q.shape[1], -1).numpy().tolist()
