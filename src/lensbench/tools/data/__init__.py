"""``lensbench data``: fetch each benchmark's official release into the layout its loader reads
(:mod:`.download`), and validate a data folder without running anything (:mod:`.check`)."""
