"""envfactory: turn real professional workflows into verifiable RL environments and train on them."""
