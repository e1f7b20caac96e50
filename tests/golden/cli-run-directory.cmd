run lib
