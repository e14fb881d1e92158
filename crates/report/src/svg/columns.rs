//! The load chart's columns: series merged to the chart's width, their outlines as step
//! polygons, arrivals per variant, and the time range they need.

use retrystorm_core::summary::VariantResult;

/// Sums runs of `factor` adjacent values.
pub(super) fn merge(values: &[u64], factor: usize) -> Vec<u64> {
    values.chunks(factor).map(|c| c.iter().sum()).collect()
}

/// The outline of a bar chart of `values`, columns `width` wide from x = 0, as the corners of a
/// step line; runs of equal values share their corners. Closed along y = `base` (the bottom of
/// the axis; a zero is drawn at `base`), ready for a polygon.
pub(super) fn step_polygon(values: &[u64], width: f64, base: f64) -> Vec<(f64, f64)> {
    let y = |v: u64| (v as f64).max(base);
    let mut pts = vec![(0.0, base)];
    let mut level = 0u64;
    for (i, &v) in values.iter().enumerate() {
        if v != level {
            let x = i as f64 * width;
            pts.push((x, y(level)));
            pts.push((x, y(v)));
            level = v;
        }
    }
    let end = values.len() as f64 * width;
    pts.push((end, y(level)));
    pts.push((end, base));
    pts
}

/// The outlines of the runs of non-zero columns of [`step_polygon`], each from the base up and
/// back down: drawn over the filled area, they keep spikes narrower than a pixel visible.
pub(super) fn step_runs(values: &[u64], width: f64, base: f64) -> Vec<Vec<(f64, f64)>> {
    let mut runs = Vec::new();
    let mut cur: Vec<(f64, f64)> = Vec::new();
    for (i, &v) in values.iter().enumerate() {
        let x = i as f64 * width;
        let y = (v as f64).max(base);
        if v == 0 {
            if let Some(&(_, last)) = cur.last() {
                cur.push((x, last));
                cur.push((x, base));
                runs.push(std::mem::take(&mut cur));
            }
            continue;
        }
        match cur.last().copied() {
            None => cur.extend([(x, base), (x, y)]),
            Some((_, last)) if last != y => cur.extend([(x, last), (x, y)]),
            Some(_) => {}
        }
    }
    if let Some(&(_, last)) = cur.last() {
        let x = values.len() as f64 * width;
        cur.push((x, last));
        cur.push((x, base));
        runs.push(cur);
    }
    runs
}

/// The smallest "nice" number (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8 times a power of ten) >= `v`.
pub(super) fn nice_ceil(v: f64) -> f64 {
    if !(v.is_finite() && v > 0.0) {
        return 1.0;
    }
    let p = 10f64.powf(v.log10().floor());
    for m in [1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0] {
        if m * p >= v * (1.0 - 1e-9) {
            return m * p;
        }
    }
    10.0 * p
}

/// Arrivals per bucket (first attempts + retries) of a variant, and its goodput.
pub(super) fn arrivals(v: &VariantResult) -> (Vec<u64>, Vec<u64>, Vec<u64>) {
    let s = &v.series;
    let len = s.first.len().max(s.retries.len()).max(s.succeeded.len());
    let at = |x: &[u32], i: usize| u64::from(x.get(i).copied().unwrap_or(0));
    let first: Vec<u64> = (0..len).map(|i| at(&s.first, i)).collect();
    let total = (0..len).map(|i| first[i] + at(&s.retries, i)).collect();
    let goodput = (0..len).map(|i| at(&s.succeeded, i)).collect();
    (first, total, goodput)
}

/// Arrivals of attempts 1..=k per bucket for each k from 2 up, from the series' `attempts`
/// (padded or cut to `len` buckets); empty when the series has none, or no retries.
pub(super) fn stacked_attempts(v: &VariantResult, len: usize) -> Vec<Vec<u64>> {
    let a = &v.series.attempts;
    if a.len() < 2 {
        return Vec::new();
    }
    let mut acc: Vec<u64> = (0..len)
        .map(|i| u64::from(a[0].get(i).copied().unwrap_or(0)))
        .collect();
    a[1..]
        .iter()
        .map(|layer| {
            for (i, x) in acc.iter_mut().enumerate() {
                *x += u64::from(layer.get(i).copied().unwrap_or(0));
            }
            acc.clone()
        })
        .collect()
}

/// The time (ms) by which `q` of `values` (per bucket of `bucket` ms) have arrived.
pub(super) fn quantile_time(values: &[u64], bucket: f64, q: f64) -> f64 {
    let sum: u64 = values.iter().sum();
    if sum == 0 {
        return 0.0;
    }
    let need = (sum as f64 * q).ceil() as u64;
    let mut acc = 0;
    for (i, v) in values.iter().enumerate() {
        acc += v;
        if acc >= need {
            return (i + 1) as f64 * bucket;
        }
    }
    values.len() as f64 * bucket
}

/// The end of the last non-empty bucket.
pub(super) fn data_end(values: &[u64], goodput: &[u64], bucket: f64) -> f64 {
    let last = |x: &[u64]| x.iter().rposition(|&v| v > 0).map_or(0, |i| i + 1);
    last(values).max(last(goodput)) as f64 * bucket
}
