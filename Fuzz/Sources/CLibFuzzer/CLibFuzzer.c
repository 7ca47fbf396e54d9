// Declarations only (include/CLibFuzzer.h); SwiftPM needs a source file for a C target.
