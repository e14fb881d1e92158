use super::*;

#[test]
fn csv_times_are_offsets_from_the_first_in_integer_nanoseconds() {
    let t = Trace::parse(
        "t.csv",
        "timestamp,class\n1733280000.5,web\n1733280000.000000001,api\n1733280002,web\n",
    )
    .unwrap();
    let at: Vec<u64> = t.arrivals.iter().map(|a| a.at.0).collect();
    assert_eq!(at, [0, 499_999_999, 1_999_999_999]);
    assert_eq!(t.classes, ["web", "api"]);
    assert_eq!(t.arrivals[0].class, 1);
    assert_eq!(t.processes(7), 2);
}

#[test]
fn jsonl_accepts_numbers_and_durations_and_keeps_ties_in_file_order() {
    let t = Trace::parse(
        "t.jsonl",
        "{\"timestamp\": \"1s\", \"class\": \"a\", \"key\": \"k1\"}\n\n{\"timestamp\": 0.25, \"class\": \"b\", \"key\": \"k1\"}\n{\"timestamp\": \"1000ms\", \"class\": \"c\"}\n",
    )
    .unwrap();
    let got: Vec<(u64, u32)> = t.arrivals.iter().map(|a| (a.at.0, a.class)).collect();
    assert_eq!(got, [(0, 1), (750_000_000, 0), (750_000_000, 2)]);
    assert_eq!(t.keys, 1);
}

#[test]
fn rfc3339_date_times_are_read_to_the_nanosecond_with_their_offsets() {
    let t = Trace::parse(
        "t.csv",
        "timestamp\n2026-12-04T13:00:00Z\n2026-12-04 14:00:00.000000001+01:00\n2026-12-04t13:00:01.5z\n2026-12-04T12:59:59.75-00:00\n",
    )
    .unwrap();
    let at: Vec<u64> = t.arrivals.iter().map(|a| a.at.0).collect();
    // 12:59:59.75 is the earliest; 14:00+01:00 is 13:00 UTC and a nanosecond.
    assert_eq!(at, [0, 250_000_000, 250_000_001, 1_750_000_000]);
    // Epoch seconds and RFC 3339 name the same instants: 2026-12-04T13:00:00Z = 1796389200.
    let t = Trace::parse(
        "t.jsonl",
        "{\"timestamp\": \"2026-12-04T13:00:00.125Z\"}\n{\"timestamp\": 1796389200}\n",
    )
    .unwrap();
    let at: Vec<u64> = t.arrivals.iter().map(|a| a.at.0).collect();
    assert_eq!(at, [0, 125_000_000]);
    // A leap second is the second before the next minute, as chrono reads it.
    let t = Trace::parse(
        "t.csv",
        "timestamp\n2016-12-31T23:59:59Z\n2016-12-31T23:59:60.5Z\n2017-01-01T00:00:00Z\n",
    )
    .unwrap();
    let at: Vec<u64> = t.arrivals.iter().map(|a| a.at.0).collect();
    assert_eq!(at, [0, 1_000_000_000, 1_500_000_000]);
}

#[test]
fn a_malformed_date_time_says_what_rfc3339_needs() {
    for bad in [
        "2026-12-04T13:00:00",
        "2026-13-04T13:00:00Z",
        "2026-12-04",
        "2026-12-04T13:00:00.1234567891Z",
    ] {
        let e = Trace::parse("t.csv", &format!("timestamp\n1.0\n{bad}\n")).unwrap_err();
        assert_eq!(
            (e.line, e.field.as_deref()),
            (Some(3), Some("timestamp")),
            "{e}"
        );
        assert!(e.to_string().contains("RFC 3339"), "{e}");
    }
}

#[test]
fn rows_out_of_order_are_sorted_and_counted() {
    let t = Trace::parse("t.csv", "timestamp\n5\n3\n1\n1\n").unwrap();
    let at: Vec<u64> = t.arrivals.iter().map(|a| a.at.0 / 1_000_000_000).collect();
    assert_eq!(at, [0, 0, 2, 4]);
    assert_eq!(
        t.reordered,
        Some(Reordered {
            moved: 4,
            first_line: 3,
            rows: 4
        })
    );
    let t = Trace::parse(
        "t.jsonl",
        "{\"timestamp\": 1}\n\n{\"timestamp\": 2}\n{\"timestamp\": 1.5}\n",
    )
    .unwrap();
    assert_eq!(
        t.reordered,
        Some(Reordered {
            moved: 2,
            first_line: 4,
            rows: 3
        })
    );
    // In order, ties included: nothing to say.
    let t = Trace::parse("t.csv", "timestamp\n1\n1\n2\n").unwrap();
    assert_eq!(t.reordered, None);
}

#[test]
fn a_negative_timestamp_is_refused_with_its_row() {
    let e = Trace::parse("t.csv", "timestamp\n5\n3\n-1\n").unwrap_err();
    assert_eq!(
        (e.line, e.column, e.field.as_deref()),
        (Some(4), Some(1), Some("timestamp"))
    );
    assert!(e.to_string().contains("\"-1\" is negative"), "{e}");
    let e = Trace::parse("t.jsonl", "{\"timestamp\": -0.5}\n").unwrap_err();
    assert_eq!(e.line, Some(1), "{e}");
    // Minus zero is zero.
    assert!(Trace::parse("t.csv", "timestamp\n-0\n1\n").is_ok());
}

#[test]
fn a_trace_of_more_rows_than_the_limit_stops_at_the_first_one_beyond() {
    assert!(too_many("t.csv", 7, MAX_ROWS - 1).is_ok());
    let e = too_many("t.csv", 5_000_002, MAX_ROWS).unwrap_err();
    assert_eq!(
        e.to_string(),
        "t.csv:5000002: more than 5000000 rows; a trace may have at most 5000000 (about 160 bytes of memory each): replay a part of it"
    );
    // 5,000,000 rows at the measured 160 bytes stay under 1 GB.
    assert!(MAX_ROWS as u64 * 160 < 1_000_000_000);
}

#[test]
fn errors_name_the_file_line_and_column() {
    let e = Trace::parse("t.csv", "timestamp,class\n1.0,a\n2.0,b\nsoon,c\n").unwrap_err();
    assert_eq!(
        (e.line, e.column, e.field.as_deref()),
        (Some(4), Some(1), Some("timestamp"))
    );
    assert!(e.to_string().starts_with("t.csv:4:1: timestamp: "), "{e}");
    let e = Trace::parse("t.csv", "class,timestamp\na,1.0\nb,-x\n").unwrap_err();
    assert_eq!((e.line, e.column), (Some(3), Some(3)), "{e}");
    let e = Trace::parse("t.csv", "timestamp,clas\n1,a\n").unwrap_err();
    assert!(e.to_string().contains("did you mean `class`"), "{e}");
    assert_eq!((e.line, e.column), (Some(1), Some(11)), "{e}");
    let e = Trace::parse("t.csv", "timestamp\n1\n2,3\n").unwrap_err();
    assert_eq!(e.line, Some(3), "{e}");
    let e = Trace::parse("t.jsonl", "{\"timestamp\": 1}\n{\"timestamp\": true}\n").unwrap_err();
    assert_eq!((e.line, e.column), (Some(2), Some(2)), "{e}");
    let e = Trace::parse("t.jsonl", "{\"timestamp\": 1, \"path\": \"/\"}\n").unwrap_err();
    assert_eq!(
        (e.line, e.column, e.field.as_deref()),
        (Some(1), Some(18), Some("path"))
    );
    let e = Trace::parse("t.jsonl", "{\"timestamp\": 1\n").unwrap_err();
    assert_eq!(e.line, Some(1), "{e}");
    // A key twice in a row: JSON keeps one value, so the other would have no effect.
    let row = "{\"timestamp\": 1, \"key\": \"a\", \"key\": \"b\"}\n";
    let e = Trace::parse("t.jsonl", &format!("{{\"timestamp\": 0}}\n{row}")).unwrap_err();
    assert_eq!(
        (e.line, e.column, e.field.as_deref()),
        (Some(2), Some(30), Some("key")),
        "{e}"
    );
    assert!(e.message.starts_with("has no effect: given twice"), "{e}");
    let e = Trace::parse("t.jsonl", "[1, {\"a\": 2}]\n").unwrap_err();
    assert!(e.message.starts_with("expected one JSON object"), "{e}");
    assert!(Trace::parse("t.csv", "timestamp\n").is_err());
    assert!(Trace::parse("t.csv", "timestamp\n1.0000000001\n").is_err());
}
