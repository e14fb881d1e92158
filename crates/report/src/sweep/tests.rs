use crate::sweep::header::SweepHeader;
use retrystorm_core::sweep::Grid;

#[test]
fn a_search_header_says_so_and_a_sweep_header_is_unchanged() {
    let g = Grid {
        axes: vec![],
        variants: vec!["v".into()],
        seeds: vec![1, 2],
    };
    let h = SweepHeader::new("m", "x = 1", &[], &g, 2);
    let t = serde_json::to_string(&h).unwrap();
    assert!(!t.contains("search"), "{t}");
    let back: SweepHeader = serde_json::from_str(&t).unwrap();
    assert_eq!(back, h);
    let s = h.clone().of_search("tune");
    let t = serde_json::to_string(&s).unwrap();
    assert!(t.contains("\"search\":\"tune\""), "{t}");
    let back: SweepHeader = serde_json::from_str(&t).unwrap();
    assert_eq!(back, s);
    assert_ne!(s, h);
}
