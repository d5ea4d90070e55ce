"""cascade-opt: cascading scheduler for the Arm Ethos-U microNPU, built on xDSL."""
