//! cargo-fuzz entry point for [`promptinclude_fuzz::trim`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| promptinclude_fuzz::trim(data));
