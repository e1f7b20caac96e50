run cli-bundle-not-a-bundle.sxb
