//! cargo-fuzz entry point for [`promptinclude_fuzz::fnmatch`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| promptinclude_fuzz::fnmatch(data));
