"""Model backends: the contract (:mod:`.base`), the provider table (:mod:`.providers`) and one module per family."""
