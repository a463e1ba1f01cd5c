"""GOBench (geometric optics generation and understanding): protocol, human ratings, generation, rating page.

Modules: :mod:`.protocol` (records, critic prompt, reply parser, scores, SPS), :mod:`.humans`
(ratings database and files, ground truth), :mod:`.generate` (text-to-image backends),
:mod:`.server` (the rating web page), :mod:`.summary` (Tables 1-2, inter-rater agreement),
:mod:`.cli` (``lensbench gobench ...``). The benchmark runner is
:mod:`lensbench.benchmarks.gobench`.
"""
