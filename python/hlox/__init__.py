"""hlox: Python side. `hlox.export` turns PyTorch models into HLO; `hlox.zoo` holds example models."""
