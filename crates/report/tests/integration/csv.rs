use retrystorm_report::{CSV_HEADER, series_csv};

use crate::fixture;

#[test]
fn header_and_one_row_per_bucket() {
    let report = fixture::report();
    let text = series_csv(&report).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next().unwrap(),
        "variant,bucket,start_ms,first,retries,arrivals,succeeded,queue_len,busy"
    );
    assert_eq!(CSV_HEADER.join(","), text.lines().next().unwrap());
    let rows: usize = report.variants.iter().map(|v| v.series.first.len()).sum();
    assert_eq!(lines.count(), rows);
}

#[test]
fn values_line_up() {
    let report = fixture::report();
    let text = series_csv(&report).unwrap();
    let mut reader = ::csv::Reader::from_reader(text.as_bytes());
    let v = &report.variants[1];
    let i = 600;
    let row = reader
        .records()
        .map(Result::unwrap)
        .find(|r| &r[0] == "naive retries" && r[1] == *i.to_string())
        .unwrap();
    assert_eq!(&row[2], "6000");
    let (f, r) = (v.series.first[i], v.series.retries[i]);
    assert_eq!(row[3].parse::<u32>().unwrap(), f);
    assert_eq!(row[4].parse::<u32>().unwrap(), r);
    assert_eq!(row[5].parse::<u32>().unwrap(), f + r);
    assert_eq!(row[7].parse::<f32>().unwrap(), v.series.queue_len[i]);
}

#[test]
fn names_with_commas_are_quoted() {
    let mut report = fixture::small();
    report.variants[0].name = "a, b".to_string();
    let text = series_csv(&report).unwrap();
    assert!(text.lines().nth(1).unwrap().starts_with("\"a, b\",0,0,"));
}

#[test]
fn replicas_csv_one_row_per_variant_replica_and_bucket() {
    use retrystorm_report::{REPLICAS_CSV_HEADER, replicas_csv};
    let report = fixture::replicated();
    let text = replicas_csv(&report).unwrap();
    assert_eq!(
        text.lines().next().unwrap(),
        "variant,tier,replica,bucket,start_ms,arrivals,served,rejected,ejections"
    );
    assert_eq!(REPLICAS_CSV_HEADER.join(","), text.lines().next().unwrap());
    let rows: usize = report
        .variants
        .iter()
        .map(|v| v.series.replicas.len() * v.series.first.len())
        .sum();
    assert_eq!(text.lines().count(), rows + 1);
    let mut reader = ::csv::Reader::from_reader(text.as_bytes());
    let v = &report.variants[1];
    let row = reader
        .records()
        .map(Result::unwrap)
        .find(|r| r[0] == *v.name && &r[2] == "2" && &r[3] == "1000")
        .unwrap();
    assert_eq!(&row[1], "server");
    assert_eq!(&row[4], "10000");
    assert_eq!(row[5], v.series.replicas[2].arrivals[1000].to_string());
    assert_eq!((&row[7], &row[8]), ("1", "1"));
    // Without replicas: the header only.
    let plain = replicas_csv(&fixture::report()).unwrap();
    assert_eq!(plain.lines().count(), 1);
}
