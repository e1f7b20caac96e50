check no-such-bundle.sxb
