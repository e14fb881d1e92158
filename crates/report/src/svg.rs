//! SVG charts drawn with plotters into a `String`.
//!
//! Text is laid out with the DejaVu Sans font compiled into the binary (plotters' `ab_glyph`
//! path), so nothing depends on the fonts installed on the machine; the SVG carries the text as
//! `<text>` elements. Output is byte-identical for the same report.

use crate::marks::{Shade, recovered_at, summary_window};
use crate::style::{
    DUPLICATED, FIRST, GOODPUT, GRID, GRID_BOLD, LOST, MARK, ONCE, PHANTOM, WINDOW, bold,
    ensure_fonts, font, shade, stroke, thin_stroke, variant,
};

use plotters::coord::Shift;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use retrystorm_core::metrics::ATTEMPT_SERIES;
use retrystorm_core::summary::{RunReport, VariantResult};

use crate::{ReportError, fmt};

/// At most this many columns are drawn per panel of the load chart; longer series are merged by
/// summing runs of adjacent buckets.
pub const MAX_COLUMNS: usize = 1200;

const WIDTH: u32 = 1200;
const LOAD_HEADER: u32 = 64;
const LOAD_PANEL: u32 = 270;

/// Turns any plotters error into a [`ReportError`] naming the chart.
fn chart_err<E: std::fmt::Display>(chart: &'static str) -> impl Fn(E) -> ReportError {
    move |e| ReportError::Chart {
        chart,
        message: e.to_string(),
    }
}

/// Draws `f` on a fresh white SVG canvas and returns the document.
fn render(
    chart: &'static str,
    size: (u32, u32),
    f: impl FnOnce(&DrawingArea<SVGBackend<'_>, Shift>) -> Result<(), ReportError>,
) -> Result<String, ReportError> {
    ensure_fonts()?;
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, size).into_drawing_area();
        root.fill(&WHITE).map_err(chart_err(chart))?;
        f(&root)?;
        root.present().map_err(chart_err(chart))?;
    }
    Ok(buf)
}

/// What a legend entry shows.
enum Swatch {
    Box(RGBColor),
    Line(RGBColor),
    Dashed(RGBColor),
    /// A box striped in several colours: "the variant's colour".
    Stripes(Vec<RGBColor>),
}

/// A legend drawn by hand in a header strip: a swatch and a label per entry, left to right.
fn legend(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    chart: &'static str,
    (x, y): (i32, i32),
    entries: &[(Swatch, String)],
) -> Result<(), ReportError> {
    let style = font(15).pos(Pos::new(HPos::Left, VPos::Center));
    let e = chart_err(chart);
    let (x_start, mut x, mut y) = (x, x, y);
    for (swatch, label) in entries {
        if x > x_start && x + legend_width(label) > WIDTH as i32 - 16 {
            x = x_start;
            y += LEGEND_ROW;
        }
        match swatch {
            Swatch::Line(c) => area
                .draw(&PathElement::new(
                    vec![(x, y), (x + 22, y)],
                    c.stroke_width(3),
                ))
                .map_err(&e)?,
            Swatch::Dashed(c) => {
                for dx in [0, 9, 18] {
                    area.draw(&PathElement::new(
                        vec![(x + dx, y), (x + dx + 5, y)],
                        c.stroke_width(2),
                    ))
                    .map_err(&e)?;
                }
            }
            Swatch::Box(c) => area
                .draw(&Rectangle::new([(x, y - 6), (x + 22, y + 6)], c.filled()))
                .map_err(&e)?,
            Swatch::Stripes(cs) => {
                let k = cs.len().max(1) as i32;
                let w = (22 / k).max(2);
                for (i, c) in cs.iter().enumerate() {
                    let x0 = x + i as i32 * w;
                    area.draw(&Rectangle::new([(x0, y - 6), (x0 + w, y + 6)], c.filled()))
                        .map_err(&e)?;
                }
            }
        }
        area.draw(&Text::new(label.clone(), (x + 28, y), style.clone()))
            .map_err(&e)?;
        x += legend_width(label);
    }
    Ok(())
}

const LEGEND_ROW: i32 = 22;

/// The room a legend entry takes: swatch, label (about 9 px a character at 15 px) and a gap.
fn legend_width(label: &str) -> i32 {
    28 + 9 * label.chars().count() as i32 + 20
}

/// How many rows [`legend`] needs for `entries` from `x`.
fn legend_rows(x: i32, entries: &[(Swatch, String)]) -> i32 {
    let (mut cur, mut rows) = (x, 1);
    for (_, label) in entries {
        if cur > x && cur + legend_width(label) > WIDTH as i32 - 16 {
            cur = x;
            rows += 1;
        }
        cur += legend_width(label);
    }
    rows
}

fn empty(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    chart: &'static str,
) -> Result<(), ReportError> {
    area.draw(&Text::new("no variants in this report", (20, 40), font(16)))
        .map_err(chart_err(chart))
}

fn heading(report: &RunReport, what: &str) -> String {
    format!("{what}: model {}, seed {}", report.model, report.seed)
}

/// A series' bucket width, falling back to the summary's when the series does not say.
fn bucket_ms(v: &VariantResult) -> f64 {
    [v.series.bucket_ms, v.summary.bucket_ms]
        .into_iter()
        .find(|b| b.is_finite() && *b > 0.0)
        .unwrap_or(1.0)
}

/// Sums runs of `factor` adjacent values.
fn merge(values: &[u64], factor: usize) -> Vec<u64> {
    values.chunks(factor).map(|c| c.iter().sum()).collect()
}

/// The outline of a bar chart of `values`, columns `width` wide from x = 0, as the corners of a
/// step line; runs of equal values share their corners. Closed along y = `base` (the bottom of
/// the axis; a zero is drawn at `base`), ready for a polygon.
fn step_polygon(values: &[u64], width: f64, base: f64) -> Vec<(f64, f64)> {
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
fn step_runs(values: &[u64], width: f64, base: f64) -> Vec<Vec<(f64, f64)>> {
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

/// The share of arrivals the load chart's time axis shows at least; the rest is the cut tail.
pub const TIME_QUANTILE: f64 = 0.99;

/// How [`load_chart_with`] draws.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LoadOptions {
    /// Every variant's arrivals as a line on one shared axis, instead of one panel per variant.
    pub overlay: bool,
    /// A logarithmic y axis (1, 10, 100, ...), for bursts next to long low tails.
    pub log_y: bool,
    /// Windows to shade, per variant in report order (see [`crate::model_windows`]). A variant
    /// without an entry here gets its summary's trigger window (`trigger_from_ms`..`trigger_to_ms`).
    pub windows: Vec<Vec<Shade>>,
    /// In the panels (not `overlay`), retries split by attempt number, one shade of the
    /// variant's colour each (the series' `attempts`; a variant without them is drawn as usual).
    pub by_attempt: bool,
}

/// One variant's data, cut to the chart's time range and merged to its columns.
struct LoadPanel<'a> {
    index: usize,
    v: &'a VariantResult,
    bucket: f64,
    first: Vec<u64>,
    total: Vec<u64>,
    goodput: Vec<u64>,
    /// With `by_attempt`: the arrivals of attempts 1..=k stacked, for each k from 2 up (the
    /// last is `total`); empty otherwise.
    layers: Vec<Vec<u64>>,
    windows: Vec<Shade>,
    recovered_at: Option<f64>,
    /// Arrivals after the end of the axis.
    cut: u64,
}

/// The smallest "nice" number (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8 times a power of ten) >= `v`.
fn nice_ceil(v: f64) -> f64 {
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
fn arrivals(v: &VariantResult) -> (Vec<u64>, Vec<u64>, Vec<u64>) {
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
fn stacked_attempts(v: &VariantResult, len: usize) -> Vec<Vec<u64>> {
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
fn quantile_time(values: &[u64], bucket: f64, q: f64) -> f64 {
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
fn data_end(values: &[u64], goodput: &[u64], bucket: f64) -> f64 {
    let last = |x: &[u64]| x.iter().rposition(|&v| v > 0).map_or(0, |i| i + 1);
    last(values).max(last(goodput)) as f64 * bucket
}

/// Arrivals at the server over time: first attempts (grey) and retries (the variant's colour)
/// stacked, goodput (intents succeeded per bucket) as a black line, one panel per variant on
/// shared axes. [`load_chart_with`] for the options.
pub fn load_chart(report: &RunReport) -> Result<String, ReportError> {
    load_chart_with(report, &LoadOptions::default())
}

/// [`load_chart`] with options: every variant as a line on one axis (`overlay`), a log y axis,
/// shaded windows.
///
/// The time axis ends when [`TIME_QUANTILE`] (99%) of all arrivals (every variant's, pooled)
/// are in, or after every shaded window and recovery mark, rounded up to a round number; the arrivals after it are counted in
/// the panel titles. Columns are the model's buckets, merged (summed) when there would be more
/// than [`MAX_COLUMNS`], and the y axis says per how much time. Windows of trouble are shaded and
/// labelled, and a dashed line marks when goodput recovered after the trigger.
pub fn load_chart_with(report: &RunReport, opt: &LoadOptions) -> Result<String, ReportError> {
    const CHART: &str = "load";
    let n = report.variants.len();

    // The time range: from the data, the windows and the recovery marks.
    let raw: Vec<(Vec<u64>, Vec<u64>, Vec<u64>)> = report.variants.iter().map(arrivals).collect();
    let windows: Vec<Vec<Shade>> = report
        .variants
        .iter()
        .enumerate()
        .map(|(i, v)| match opt.windows.get(i) {
            Some(w) => w.clone(),
            None => summary_window(&v.summary).into_iter().collect(),
        })
        .collect();
    // Every variant's arrivals pooled on one time grid (the finest bucket), for the quantile.
    let fine = report
        .variants
        .iter()
        .map(bucket_ms)
        .fold(f64::INFINITY, f64::min);
    let mut pooled: Vec<u64> = Vec::new();
    let mut full_end = 0f64;
    let mut end = 0f64;
    for (i, v) in report.variants.iter().enumerate() {
        let b = bucket_ms(v);
        let (_, total, goodput) = &raw[i];
        let data = data_end(total, goodput, b);
        full_end = full_end.max(data);
        for (j, &t) in total.iter().enumerate() {
            let k = ((j as f64 * b) / fine).round() as usize;
            if pooled.len() <= k {
                pooled.resize(k + 1, 0);
            }
            pooled[k] += t;
        }
        if total.iter().all(|&t| t == 0) {
            end = end.max(data);
        }
        for w in &windows[i] {
            end = end.max(w.to_ms.min(data.max(w.to_ms * 1.1)) * 1.05);
        }
        if let Some(r) = recovered_at(&v.summary) {
            end = end.max(r * 1.05);
        }
    }
    end = end.max(quantile_time(&pooled, fine, TIME_QUANTILE));
    if end >= 0.9 * full_end {
        end = end.max(full_end);
    }
    let end_ms = nice_ceil(end);
    let seconds = end_ms >= 2000.0;
    let unit = if seconds { 1000.0 } else { 1.0 };

    // Columns: the buckets before the end, merged when too many.
    let max_buckets = report
        .variants
        .iter()
        .map(|v| (end_ms / bucket_ms(v)).ceil() as usize)
        .max()
        .unwrap_or(1);
    let factor = max_buckets.div_ceil(MAX_COLUMNS).max(1);
    let panels: Vec<LoadPanel> = report
        .variants
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let bucket = bucket_ms(v);
            let keep = ((end_ms / bucket).ceil() as usize).max(1);
            let (first, total, goodput) = &raw[i];
            let cut = total.iter().skip(keep).sum();
            let take = |x: &Vec<u64>| merge(&x[..keep.min(x.len())], factor);
            let layers = if opt.by_attempt && !opt.overlay {
                stacked_attempts(v, total.len()).iter().map(take).collect()
            } else {
                Vec::new()
            };
            LoadPanel {
                index: i,
                v,
                bucket,
                first: take(first),
                total: take(total),
                goodput: take(goodput),
                layers,
                windows: windows[i].clone(),
                recovered_at: recovered_at(&v.summary),
                cut,
            }
        })
        .collect();
    let any_goodput = !opt.overlay && panels.iter().any(|p| p.goodput.iter().any(|&g| g > 0));
    let any_window = panels.iter().any(|p| !p.windows.is_empty());
    let any_recovery = panels.iter().any(|p| p.recovered_at.is_some());
    let any_cut = panels.iter().any(|p| p.cut > 0);

    // Shared scales.
    let y_max = panels
        .iter()
        .flat_map(|p| p.total.iter().chain(&p.goodput))
        .copied()
        .max()
        .unwrap_or(0)
        .max(1) as f64;
    let same_bucket = panels.iter().all(|p| p.bucket == panels[0].bucket);
    let column_ms = panels.first().map_or(1.0, |p| p.bucket) * factor as f64;
    let y_desc = if !same_bucket {
        "arrivals per bucket (see titles)".to_string()
    } else if opt.log_y {
        format!("arrivals per {} (log scale)", fmt::duration(column_ms))
    } else {
        format!("arrivals per {}", fmt::duration(column_ms))
    };
    let mut x_desc = if seconds { "time (s)" } else { "time (ms)" }.to_string();
    if factor > 1 {
        // Too many buckets to draw one column each: say how they were merged.
        if same_bucket {
            x_desc.push_str(&format!(
                "; each column sums {factor} buckets of {}",
                fmt::duration(panels[0].bucket),
            ));
        } else {
            x_desc.push_str(&format!("; each column sums {factor} buckets"));
        }
    }

    let note = any_cut.then(|| {
        format!(
            "The time axis ends at {}, by when {}% of all arrivals are in; the later ones are counted in the titles.",
            fmt::duration(end_ms),
            fmt::trim(TIME_QUANTILE * 100.0)
        )
    });
    let mut entries: Vec<(Swatch, String)> = Vec::new();
    if opt.overlay {
        for p in &panels {
            entries.push((Swatch::Line(variant(p.index)), p.v.name.clone()));
        }
    } else if let Some(k) = panels
        .iter()
        .map(|p| p.layers.len())
        .max()
        .filter(|&k| k > 0)
    {
        entries.push((Swatch::Box(FIRST), "first attempts".into()));
        for j in 0..k {
            let label = match j {
                0 => "first retry (attempt 2)".to_string(),
                _ if j + 1 == ATTEMPT_SERIES - 1 => {
                    format!("attempt {} and later", j + 2)
                }
                _ => format!("attempt {}", j + 2),
            };
            entries.push((
                Swatch::Stripes(
                    panels
                        .iter()
                        .map(|p| shade(variant(p.index), j, ATTEMPT_SERIES - 1))
                        .collect(),
                ),
                label,
            ));
        }
    } else {
        entries.push((Swatch::Box(FIRST), "first attempts".into()));
        entries.push((
            Swatch::Stripes(panels.iter().map(|p| variant(p.index)).collect()),
            "retries (in the variant's colour)".into(),
        ));
        if any_goodput {
            entries.push((Swatch::Line(GOODPUT), "goodput (intents succeeded)".into()));
        }
    }
    if any_window {
        entries.push((
            Swatch::Box(WINDOW),
            "outage / capacity drop / load spike".into(),
        ));
    }
    if any_recovery {
        entries.push((Swatch::Dashed(MARK), "goodput recovered".into()));
    }
    let extra_rows = (legend_rows(18, &entries) - 1) * LEGEND_ROW;
    let header_h = LOAD_HEADER + extra_rows as u32 + if note.is_some() { 22 } else { 0 };
    let panel_h = if opt.overlay {
        LOAD_PANEL * 2
    } else {
        LOAD_PANEL
    };
    let rows = if opt.overlay { 1 } else { n.max(1) };
    let height = header_h + panel_h * rows as u32;

    render(CHART, (WIDTH, height), |root| {
        let (header, body) = root.split_vertically(header_h);
        let what = if opt.overlay {
            "arrivals at the server, every variant on one axis"
        } else {
            "arrivals at the server"
        };
        header
            .draw(&Text::new(heading(report, what), (16, 10), bold(20)))
            .map_err(chart_err(CHART))?;
        if n == 0 {
            return empty(&body, CHART);
        }

        legend(&header, CHART, (18, 46), &entries)?;
        if let Some(note) = &note {
            header
                .draw(&Text::new(note.clone(), (18, 66 + extra_rows), font(14)))
                .map_err(chart_err(CHART))?;
        }

        let scale = Scale {
            x0: -end_ms / unit * 0.006,
            x1: end_ms / unit,
            unit,
            factor,
        };
        let areas = body.split_evenly((rows, 1));
        if opt.overlay {
            let title = format!(
                "first attempts + retries per {}, one line per variant",
                fmt::duration(column_ms)
            );
            draw_y(opt.log_y, y_max, |y| {
                load_panel(
                    &areas[0], &scale, y, &title, &panels, true, false, &x_desc, &y_desc,
                )
            })?;
        } else {
            for (i, (p, area)) in panels.iter().zip(&areas).enumerate() {
                let mut title = format!(
                    "{}: peak {} arrivals per {} ({} retries)",
                    p.v.name,
                    fmt::int(p.v.summary.peak_arrivals),
                    fmt::duration(p.bucket),
                    fmt::int(p.v.summary.peak_retries),
                );
                let s = &p.v.summary;
                // By attempt: the worst window each retry wave reaches.
                if !p.layers.is_empty() {
                    let waves: Vec<String> = s
                        .attempt_peaks
                        .iter()
                        .skip(1)
                        .take(ATTEMPT_SERIES - 1)
                        .map(|a| fmt::int(a.peak_window))
                        .collect();
                    if !waves.is_empty() {
                        title.push_str(&format!(
                            "; retry waves peak {} per {} window",
                            waves.join(", "),
                            fmt::duration(s.peak_window_ms)
                        ));
                    }
                }
                match (s.recovered, s.recovery_ms) {
                    (Some(true), Some(ms)) => title.push_str(&format!(
                        "; recovered {} after the trigger",
                        fmt::duration(ms)
                    )),
                    (Some(false), _) => title.push_str("; never recovered"),
                    _ => {}
                }
                if p.cut > 0 {
                    title.push_str(&format!(
                        "; {} later arrivals, the last at {}",
                        fmt::int(p.cut),
                        fmt::duration(s.last_arrival_ms)
                    ));
                }
                let last = i + 1 == n;
                draw_y(opt.log_y, y_max, |y| {
                    load_panel(
                        area,
                        &scale,
                        y,
                        &title,
                        std::slice::from_ref(p),
                        false,
                        any_goodput,
                        if last { &x_desc } else { "" },
                        &y_desc,
                    )
                })?;
            }
        }
        Ok(())
    })
}

/// The shared x scale of the load chart's panels (in display units: ms or s).
struct Scale {
    x0: f64,
    x1: f64,
    unit: f64,
    factor: usize,
}

/// Calls `f` with a linear y range `0..1.08 max`, or a log range from 0.8 to the next power of
/// ten above `max`, and the floor that zero values are drawn at.
fn draw_y(
    log: bool,
    max: f64,
    f: impl FnOnce(YSpec) -> Result<(), ReportError>,
) -> Result<(), ReportError> {
    if log {
        let hi = 10f64.powf((max * 1.5).log10().ceil()).max(10.0);
        f(YSpec::Log(0.8, hi))
    } else {
        f(YSpec::Linear(max * 1.08))
    }
}

#[derive(Clone, Copy)]
enum YSpec {
    Linear(f64),
    Log(f64, f64),
}

#[allow(clippy::too_many_arguments)]
fn load_panel(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    scale: &Scale,
    y: YSpec,
    title: &str,
    panels: &[LoadPanel],
    overlay: bool,
    goodput: bool,
    x_desc: &str,
    y_desc: &str,
) -> Result<(), ReportError> {
    match y {
        YSpec::Linear(hi) => load_panel_in(
            area,
            scale,
            0f64..hi,
            0.0,
            hi,
            title,
            panels,
            overlay,
            goodput,
            x_desc,
            y_desc,
        ),
        YSpec::Log(lo, hi) => load_panel_in(
            area,
            scale,
            (lo..hi).log_scale(),
            lo,
            hi,
            title,
            panels,
            overlay,
            goodput,
            x_desc,
            y_desc,
        ),
    }
}

#[allow(clippy::too_many_arguments)]
fn load_panel_in<Y>(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    scale: &Scale,
    y_spec: Y,
    y_lo: f64,
    y_hi: f64,
    title: &str,
    panels: &[LoadPanel],
    overlay: bool,
    goodput: bool,
    x_desc: &str,
    y_desc: &str,
) -> Result<(), ReportError>
where
    Y: AsRangedCoord<Value = f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    const CHART: &str = "load";
    let last = !x_desc.is_empty();
    let mut chart = ChartBuilder::on(area)
        .caption(title, bold(16))
        .margin_left(12)
        .margin_right(24)
        .margin_top(4)
        .margin_bottom(6)
        .x_label_area_size(if last { 46 } else { 26 })
        .y_label_area_size(78)
        .build_cartesian_2d(scale.x0..scale.x1, y_spec)
        .map_err(chart_err(CHART))?;
    let x_fmt = |x: &f64| {
        if *x < 0.0 {
            String::new()
        } else {
            fmt::tick(*x)
        }
    };
    let y_fmt = |y: &f64| fmt::tick(*y);
    let mut mesh = chart.configure_mesh();
    mesh.x_labels(12)
        .y_labels(5)
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .label_style(font(13))
        .axis_desc_style(font(14))
        .y_desc(y_desc)
        .bold_line_style(GRID_BOLD)
        .light_line_style(GRID)
        .max_light_lines(1);
    if last {
        mesh.x_desc(x_desc);
    }
    mesh.draw().map_err(chart_err(CHART))?;

    // Windows first, behind the data; one label per distinct window.
    let mut seen: Vec<(f64, f64, &str)> = Vec::new();
    for w in panels.iter().flat_map(|p| &p.windows) {
        let key = (w.from_ms, w.to_ms, w.label.as_str());
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        let (a, b) = (w.from_ms / scale.unit, (w.to_ms / scale.unit).min(scale.x1));
        if a >= scale.x1 {
            continue;
        }
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(a, y_lo), (b, y_hi)],
                WINDOW.filled(),
            )))
            .map_err(chart_err(CHART))?;
        chart
            .draw_series(std::iter::once(Text::new(
                w.label.clone(),
                (a, y_hi),
                font(12).pos(Pos::new(HPos::Left, VPos::Top)),
            )))
            .map_err(chart_err(CHART))?;
    }

    let n = panels.len();
    for (k, p) in panels.iter().enumerate() {
        let width = scale.factor as f64 * p.bucket / scale.unit;
        let color = variant(p.index);
        if overlay {
            let outline = step_polygon(&p.total, width, y_lo);
            chart
                .draw_series(LineSeries::new(
                    outline,
                    color.stroke_width(thin_stroke(k, n)),
                ))
                .map_err(chart_err(CHART))?;
        } else {
            // Each area with its outline, so that a spike one bucket wide (narrower than a
            // pixel on a long axis) still shows. By attempt: the stacks from the top down, each
            // attempt's shade above the ones before it.
            let mut areas: Vec<(&Vec<u64>, RGBColor)> = p
                .layers
                .iter()
                .enumerate()
                .rev()
                .map(|(j, l)| (l, shade(color, j, ATTEMPT_SERIES - 1)))
                .collect();
            if areas.is_empty() {
                areas.push((&p.total, color));
            }
            areas.push((&p.first, FIRST));
            for (values, c) in areas {
                let outline = step_polygon(values, width, y_lo);
                chart
                    .draw_series(std::iter::once(Polygon::new(outline.clone(), c.filled())))
                    .map_err(chart_err(CHART))?;
                chart
                    .draw_series(
                        step_runs(values, width, y_lo)
                            .into_iter()
                            .map(|run| PathElement::new(run, c.stroke_width(1))),
                    )
                    .map_err(chart_err(CHART))?;
            }
            if goodput {
                let pts = p
                    .goodput
                    .iter()
                    .enumerate()
                    .map(|(j, &g)| ((j as f64 + 0.5) * width, (g as f64).max(y_lo)));
                chart
                    .draw_series(LineSeries::new(pts, GOODPUT.stroke_width(2)))
                    .map_err(chart_err(CHART))?;
            }
        }
        if let Some(r) = p.recovered_at {
            let x = r / scale.unit;
            if x <= scale.x1 {
                let mark = if overlay { color } else { MARK };
                chart
                    .draw_series(DashedLineSeries::new(
                        [(x, y_lo), (x, y_hi)],
                        6,
                        4,
                        mark.stroke_width(2),
                    ))
                    .map_err(chart_err(CHART))?;
                let label = if overlay {
                    format!("{} recovered", p.v.name)
                } else {
                    "recovered".to_string()
                };
                let row = if overlay { k as f64 } else { 0.0 };
                let ypos = if y_lo == 0.0 {
                    y_hi * (0.9 - 0.07 * row)
                } else {
                    y_hi / 2f64.powf(1.0 + row)
                };
                chart
                    .draw_series(std::iter::once(Text::new(
                        label,
                        (x, ypos),
                        font(12).pos(Pos::new(HPos::Left, VPos::Center)),
                    )))
                    .map_err(chart_err(CHART))?;
            }
        }
    }
    Ok(())
}

/// What happened to the effect of each settled intent, as one horizontal 100% bar per variant:
/// applied once, duplicated, lost with the client told it failed, and phantom (lost with the
/// client told it succeeded). The counts, including false failures (client gave up but the
/// effect was applied), are written above each bar.
pub fn outcome_chart(report: &RunReport) -> Result<String, ReportError> {
    const CHART: &str = "outcome";
    const BAND: u32 = 82;
    const HEADER: u32 = 74;
    let n = report.variants.len();
    let height = HEADER + BAND * n.max(1) as u32 + 56;
    render(CHART, (WIDTH, height), |root| {
        let (header, body) = root.split_vertically(HEADER);
        header
            .draw(&Text::new(
                heading(report, "effects of settled intents"),
                (16, 10),
                bold(20),
            ))
            .map_err(chart_err(CHART))?;
        legend(
            &header,
            CHART,
            (18, 52),
            &[
                (Swatch::Box(ONCE), "applied once".into()),
                (Swatch::Box(DUPLICATED), "duplicated".into()),
                (Swatch::Box(LOST), "lost (client told failure)".into()),
                (
                    Swatch::Box(PHANTOM),
                    "phantom (lost, client told success)".into(),
                ),
            ],
        )?;
        if n == 0 {
            return empty(&body, CHART);
        }

        let mut chart = ChartBuilder::on(&body)
            .margin_left(16)
            .margin_right(30)
            .margin_top(4)
            .x_label_area_size(46)
            .build_cartesian_2d(0f64..100f64, 0f64..n as f64)
            .map_err(chart_err(CHART))?;
        let x_fmt = |x: &f64| format!("{}%", fmt::trim(*x));
        chart
            .configure_mesh()
            .disable_y_mesh()
            .disable_y_axis()
            .x_labels(11)
            .x_label_formatter(&x_fmt)
            .label_style(font(13))
            .axis_desc_style(font(14))
            .x_desc("share of settled intents")
            .bold_line_style(GRID_BOLD)
            .light_line_style(GRID)
            .max_light_lines(1)
            .draw()
            .map_err(chart_err(CHART))?;

        for (i, v) in report.variants.iter().enumerate() {
            let s = &v.summary;
            // Band i, counted from the top; y grows upwards.
            let y0 = (n - 1 - i) as f64;
            let settled = s.lost + s.applied_once + s.duplicated;
            let phantom = s.phantom.min(s.lost);
            let label = if settled == 0 {
                format!("{}: no settled intents", v.name)
            } else {
                format!(
                    "{}: {} settled; once {}, duplicated {}, lost {} (phantom {}), false failures {}",
                    v.name,
                    fmt::int(settled),
                    fmt::int(s.applied_once),
                    fmt::int(s.duplicated),
                    fmt::int(s.lost),
                    fmt::int(s.phantom),
                    fmt::int(s.false_failures),
                )
            };
            chart
                .draw_series(std::iter::once(Text::new(
                    label,
                    (0.0, y0 + 0.8),
                    font(15).pos(Pos::new(HPos::Left, VPos::Center)),
                )))
                .map_err(chart_err(CHART))?;
            if settled == 0 {
                continue;
            }
            let segments = [
                (s.applied_once, ONCE),
                (s.duplicated, DUPLICATED),
                (s.lost - phantom, LOST),
                (phantom, PHANTOM),
            ];
            let mut x = 0.0;
            for (count, color) in segments {
                if count == 0 {
                    continue;
                }
                let w = 100.0 * count as f64 / settled as f64;
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(x, y0 + 0.12), (x + w, y0 + 0.6)],
                        color.filled(),
                    )))
                    .map_err(chart_err(CHART))?;
                x += w;
            }
        }
        Ok(())
    })
}

/// The x scale of [`cdf_chart_with`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum XScale {
    /// Logarithmic when the positive completion times span a factor of 100 or more.
    #[default]
    Auto,
    Linear,
    Log,
}

/// [`cdf_chart_with`] with [`XScale::Auto`].
pub fn cdf_chart(report: &RunReport) -> Result<String, ReportError> {
    cdf_chart_with(report, XScale::Auto)
}

/// Completion-time CDF of every variant, one line each, with a legend.
pub fn cdf_chart_with(report: &RunReport, scale: XScale) -> Result<String, ReportError> {
    const CHART: &str = "completion CDF";
    let points = report.variants.iter().flat_map(|v| &v.completion_cdf);
    let max = points
        .clone()
        .map(|p| p.0)
        .filter(|x| x.is_finite())
        .fold(0.0, f64::max);
    let min_pos = points
        .map(|p| p.0)
        .filter(|x| x.is_finite() && *x > 0.0)
        .fold(f64::INFINITY, f64::min);
    let log = match scale {
        XScale::Linear => false,
        XScale::Log => min_pos.is_finite(),
        XScale::Auto => min_pos.is_finite() && max / min_pos >= 100.0,
    };
    render(CHART, (WIDTH, 660), |root| {
        if report.variants.is_empty() {
            return empty(root, CHART);
        }
        if log {
            let lo = 10f64.powf(min_pos.log10().floor());
            let hi = 10f64.powf(max.log10().ceil()).max(lo * 10.0);
            draw_cdf(
                report,
                root,
                (lo..hi).log_scale(),
                "completion time (ms, log scale)",
            )
        } else {
            let hi = if max > 0.0 { max * 1.02 } else { 1.0 };
            draw_cdf(report, root, 0f64..hi, "completion time (ms)")
        }
    })
}

/// One CDF line: its points, its legend entry, whether it is dashed (failures).
type CdfCurve<'a> = (&'a [(f64, f64)], String, bool);

fn draw_cdf<X>(
    report: &RunReport,
    root: &DrawingArea<SVGBackend<'_>, Shift>,
    x_spec: X,
    x_desc: &str,
) -> Result<(), ReportError>
where
    X: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
{
    const CHART: &str = "completion CDF";
    let log = x_desc.contains("log");
    let (top, rest) = root.split_vertically(30);
    top.draw(&Text::new(
        heading(report, "completion time CDF"),
        (16, 10),
        bold(20),
    ))
    .map_err(chart_err(CHART))?;
    // Split when the run carries per-outcome CDFs (every fresh run; a report read back from
    // JSON has only the joint one): successes solid, failures dashed, each a CDF of its own.
    let split = report
        .variants
        .iter()
        .any(|v| !v.success_cdf.is_empty() || !v.failure_cdf.is_empty());
    let caption = if split {
        "solid: intents that succeeded, dashed: intents that failed (each its own CDF); ● p50, ▲ p99"
    } else {
        "settled intents, successes and failures together; ● p50, ▲ p99 of each variant"
    };
    let mut chart = ChartBuilder::on(&rest)
        .caption(caption, font(14))
        .margin(16)
        .margin_top(6)
        .margin_right(44)
        .x_label_area_size(50)
        .y_label_area_size(70)
        .build_cartesian_2d(x_spec, 0f64..1.0)
        .map_err(chart_err(CHART))?;
    let x_fmt = |x: &f64| fmt::tick(*x);
    let y_fmt = |y: &f64| format!("{}%", fmt::trim(y * 100.0));
    let y_desc = if split {
        "share of the variant's successes / failures completed"
    } else {
        "share of settled intents completed"
    };
    chart
        .configure_mesh()
        .x_labels(12)
        .y_labels(11)
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .label_style(font(13))
        .axis_desc_style(font(14))
        .x_desc(x_desc)
        .y_desc(y_desc)
        .bold_line_style(GRID_BOLD)
        .light_line_style(GRID)
        .max_light_lines(1)
        .draw()
        .map_err(chart_err(CHART))?;
    let n = report.variants.len();
    for (i, v) in report.variants.iter().enumerate() {
        let color = variant(i);
        let w = stroke(i, n);
        let curves: Vec<CdfCurve> = if split {
            let s = &v.summary;
            vec![
                (
                    &v.success_cdf[..],
                    format!("{} succeeded ({})", v.name, fmt::int(s.succeeded)),
                    false,
                ),
                (
                    &v.failure_cdf[..],
                    format!("{} failed ({})", v.name, fmt::int(s.failed)),
                    true,
                ),
            ]
        } else {
            vec![(&v.completion_cdf[..], v.name.clone(), false)]
        };
        for (cdf, name, dashed) in curves {
            let pts: Vec<(f64, f64)> = cdf
                .iter()
                .copied()
                .filter(|(x, y)| x.is_finite() && y.is_finite() && (!log || *x > 0.0))
                .collect();
            if split && pts.is_empty() {
                continue;
            }
            let (p50, p99) = if split {
                (quantile(cdf, 0.5), quantile(cdf, 0.99))
            } else {
                (v.summary.completion_ms.p50, v.summary.completion_ms.p99)
            };
            let label = if pts.is_empty() {
                format!("{name} (no settled intents)")
            } else {
                format!("{name}: p50 {} ms, p99 {} ms", fmt::ms(p50), fmt::ms(p99))
            };
            let has = !pts.is_empty();
            let anno = if dashed {
                chart
                    .draw_series(DashedLineSeries::new(pts, 9, 5, color.stroke_width(w)))
                    .map_err(chart_err(CHART))?
            } else {
                chart
                    .draw_series(LineSeries::new(pts, color.stroke_width(w)))
                    .map_err(chart_err(CHART))?
            };
            anno.label(label).legend(move |(x, y)| {
                if dashed {
                    PathElement::new(vec![(x, y), (x + 8, y)], color.stroke_width(3))
                } else {
                    PathElement::new(vec![(x, y), (x + 22, y)], color.stroke_width(3))
                }
            });
            if has {
                let ok = |x: f64| x.is_finite() && (!log || x > 0.0);
                let fill = |c: RGBColor| {
                    if dashed {
                        c.stroke_width(2)
                    } else {
                        c.filled()
                    }
                };
                if ok(p50) {
                    chart
                        .draw_series(std::iter::once(Circle::new((p50, 0.5), 5, fill(color))))
                        .map_err(chart_err(CHART))?;
                }
                if ok(p99) {
                    chart
                        .draw_series(std::iter::once(TriangleMarker::new(
                            (p99, 0.99),
                            6,
                            fill(color),
                        )))
                        .map_err(chart_err(CHART))?;
                }
            }
        }
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .label_font(font(15))
        .background_style(WHITE.mix(0.9))
        .border_style(GRID_BOLD)
        .margin(12)
        .draw()
        .map_err(chart_err(CHART))?;
    Ok(())
}

/// The smallest x whose CDF share reaches `q` (the points are the 200 quantiles of
/// [`retrystorm_core::metrics::Completions::cdf`], so this is that quantile); NaN when empty.
fn quantile(cdf: &[(f64, f64)], q: f64) -> f64 {
    cdf.iter()
        .find(|(_, y)| *y >= q - 1e-9)
        .map_or(f64::NAN, |p| p.0)
}

/// The request path, tier by tier: one panel per tier (top first; the last is `[server]`), the
/// arrivals per bucket at that tier as one line per variant, and each panel's title with the
/// tier's totals. Variants keep their colours from the other charts.
pub fn tiers_chart(report: &RunReport) -> Result<String, ReportError> {
    const CHART: &str = "tiers";
    let tiers = report
        .variants
        .first()
        .map_or(0, |v| v.summary.tiers.len().max(1));
    let height = LOAD_HEADER + LOAD_PANEL * tiers as u32 + 20;
    render(CHART, (WIDTH, height), |root| {
        if report.variants.is_empty() {
            return empty(root, CHART);
        }
        let (top, rest) = root.split_vertically(LOAD_HEADER);
        top.draw(&Text::new(
            heading(report, "arrivals at each tier of the request path"),
            (16, 10),
            bold(20),
        ))
        .map_err(chart_err(CHART))?;
        let n = report.variants.len();
        // The per-tier series of a variant: the path's own (several tiers) or the main one.
        let series_of = |v: &VariantResult, t: usize| -> Vec<u64> {
            match v.series.tiers.get(t) {
                Some(s) => s
                    .first
                    .iter()
                    .zip(&s.retries)
                    .map(|(a, b)| u64::from(*a) + u64::from(*b))
                    .collect(),
                None => v
                    .series
                    .first
                    .iter()
                    .zip(&v.series.retries)
                    .map(|(a, b)| u64::from(*a) + u64::from(*b))
                    .collect(),
            }
        };
        let end_s = report
            .variants
            .iter()
            .map(|v| v.summary.end_ms / 1000.0)
            .fold(0.0, f64::max)
            .max(1e-3);
        let panels = rest.split_evenly((tiers, 1));
        for (t, panel) in panels.iter().enumerate() {
            let ymax = report
                .variants
                .iter()
                .flat_map(|v| series_of(v, t))
                .max()
                .unwrap_or(0)
                .max(1) as f64;
            let first = &report.variants[0];
            let bucket = bucket_ms(first);
            let name = first
                .summary
                .tiers
                .get(t)
                .map_or("server".to_string(), |s| s.name.clone());
            let totals: Vec<String> = report
                .variants
                .iter()
                .filter_map(|v| v.summary.tiers.get(t))
                .map(|s| fmt::num(s.arrivals as f64))
                .collect();
            let title = format!(
                "tier {t}: {name} (arrivals per {} ms; totals {})",
                fmt::trim(bucket),
                totals.join(" / ")
            );
            let mut chart = ChartBuilder::on(panel)
                .caption(title, font(15))
                .margin(12)
                .margin_right(44)
                .x_label_area_size(36)
                .y_label_area_size(70)
                .build_cartesian_2d(0f64..end_s, 0f64..ymax * 1.08)
                .map_err(chart_err(CHART))?;
            let y_fmt = |y: &f64| fmt::tick(*y);
            chart
                .configure_mesh()
                .x_labels(12)
                .y_labels(6)
                .y_label_formatter(&y_fmt)
                .label_style(font(13))
                .axis_desc_style(font(14))
                .x_desc("simulated time (s)")
                .y_desc(format!("arrivals per {} ms", fmt::trim(bucket)))
                .bold_line_style(GRID_BOLD)
                .light_line_style(GRID)
                .max_light_lines(1)
                .draw()
                .map_err(chart_err(CHART))?;
            for (i, v) in report.variants.iter().enumerate() {
                let b = bucket_ms(v) / 1000.0;
                let pts: Vec<(f64, f64)> = series_of(v, t)
                    .into_iter()
                    .enumerate()
                    .map(|(k, y)| (k as f64 * b, y as f64))
                    .collect();
                let color = variant(i);
                chart
                    .draw_series(LineSeries::new(pts, color.stroke_width(stroke(i, n))))
                    .map_err(chart_err(CHART))?
                    .label(v.name.clone())
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 22, y)], color.stroke_width(3))
                    });
            }
            if t == 0 {
                chart
                    .configure_series_labels()
                    .position(SeriesLabelPosition::UpperRight)
                    .label_font(font(14))
                    .background_style(WHITE.mix(0.9))
                    .border_style(GRID_BOLD)
                    .draw()
                    .map_err(chart_err(CHART))?;
            }
        }
        Ok(())
    })
}
