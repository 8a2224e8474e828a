"""Time kernels, measure device ceilings and place results on the roofline."""
