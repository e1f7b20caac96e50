explain cuda-mem-001.sx --device cuda
