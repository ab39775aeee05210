//! Deeply nested JSON is refused at once with one message, instead of overflowing the stack
//! (15,000 levels used to kill the process with SIGSEGV after about 20 s).

use std::time::Instant;

use plait_core::scenario::Scenario;

fn nested(depth: usize, open: char, close: char) -> String {
    let mut text = String::from("{\"simulation\": ");
    text.extend(std::iter::repeat_n(open, depth));
    text.extend(std::iter::repeat_n(close, depth));
    text.push('}');
    text
}

#[test]
fn fifteen_thousand_levels_are_refused_quickly() {
    for (open, close) in [('[', ']'), ('{', '}')] {
        let text = nested(15_000, open, close);
        let started = Instant::now();
        let e = Scenario::from_json_str(&text, "deep.json", &[]).unwrap_err();
        assert!(
            started.elapsed().as_secs_f64() < 1.0,
            "{:?}",
            started.elapsed()
        );
        assert_eq!(e.file, "deep.json");
        assert_eq!(
            e.message,
            "JSON nested deeper than 128 levels at line 1, column 143; a scenario needs a few"
        );
    }
}

#[test]
fn brackets_inside_strings_do_not_count_and_128_levels_parse() {
    // 128 levels with the top-level object: the depth is accepted, the content then refused
    // by validation as usual (not by the depth cap).
    let e = Scenario::from_json_str(&nested(127, '[', ']'), "ok.json", &[]).unwrap_err();
    assert!(!e.message.contains("nested deeper"), "{e}");
    let e = Scenario::from_json_str(&nested(128, '[', ']'), "deep.json", &[]).unwrap_err();
    assert!(e.message.starts_with("JSON nested deeper than 128"), "{e}");
    let quoted = format!(
        "{{\"name\": \"{}\\\"{}\"}}",
        "[".repeat(500),
        "{".repeat(500)
    );
    let e = Scenario::from_json_str(&quoted, "q.json", &[]).unwrap_err();
    assert!(!e.message.contains("nested deeper"), "{e}");
}
