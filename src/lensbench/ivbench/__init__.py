"""IV-Bench support code: fast video frame sampling (:mod:`.frames`) and the data synthesis
pipeline of the paper's Sec. 4.4 (:mod:`.synth`). The benchmark itself is
:mod:`lensbench.benchmarks.ivbench`."""
