//! cargo-fuzz entry point for [`promptinclude_fuzz::decode`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| promptinclude_fuzz::decode(data));
