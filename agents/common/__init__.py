"""What every family shares: random streams, compiled building blocks and streamed reward tables.

- :mod:`agents.common.sampling`: per-copy SFC64 sampling streams and the compiled samplers
  (uniform, normal, gamma) with their plain-Python twin :class:`~agents.common.sampling.SamplerReference`;
- :mod:`agents.common.philox`: per-copy Philox noise streams of the private agents;
- :mod:`agents.common.streams`: :class:`~agents.common.streams.CopyStreams`, per-copy numpy generators;
- :mod:`agents.common.kernels`: reading a reward table, checking feedback, argmax;
- :mod:`agents.common.tables`: reward tables streamed in blocks of rows.

The seeding rule every batched agent follows is written once in ``docs/design.md`` ("Seeds").
"""
