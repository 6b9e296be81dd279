//! cargo-fuzz entry point for [`promptinclude_fuzz::gitignore`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| promptinclude_fuzz::gitignore(data));
