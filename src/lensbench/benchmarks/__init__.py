"""The five benchmarks, one package each; :mod:`.registry` maps CLI names to them."""
