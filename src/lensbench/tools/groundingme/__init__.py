"""GroundingME side tools: the Sec. 5.3 rejection-negatives builder (``lensbench groundingme negatives``)."""
