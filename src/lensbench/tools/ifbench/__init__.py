"""IF-Bench construction (paper Sec. 3.2): collect and filter images, generate questions with the
Fig. 14 prompt through the engine, check them against the release schema, balance the letters,
calibrate them on the review page in two stages, write the release (``lensbench ifbench``)."""
