// A shared library that exports nothing StablehloLibrary looks for (its Load test).
extern "C" int pjrtkit_not_stablehlo() { return 0; }
