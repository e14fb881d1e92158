//! The load chart: arrivals at the server over time, one panel per variant (or overlaid).

use crate::marks::{Shade, recovered_at};
use crate::style::{FIRST, GOODPUT, MARK, WINDOW, bold, font, shade, variant};

use plotters::prelude::*;
use retrystorm_core::metrics::ATTEMPT_SERIES;
use retrystorm_core::summary::{RunReport, VariantResult};

use super::*;
use crate::{error::ReportError, fmt};

/// At most this many columns are drawn per panel of the load chart; longer series are merged by
/// summing runs of adjacent buckets.
pub const MAX_COLUMNS: usize = 1200;

pub(super) const LOAD_HEADER: u32 = 64;
pub(super) const LOAD_PANEL: u32 = 270;

/// The share of arrivals the load chart's time axis shows at least; the rest is the cut tail.
pub const TIME_QUANTILE: f64 = 0.99;

/// The load chart's y axis is logarithmic by itself (unless [`LoadOptions::linear_y`]) when
/// the tallest column lies in the first [`BURST_SHARE`] of the time axis and is more than this
/// many times the median of the other non-zero columns (every panel pooled): a first burst
/// that would flatten the rest into the baseline.
pub const BURST_RATIO: f64 = 20.0;

/// See [`BURST_RATIO`]: the share of the time axis, from its start, that counts as "first".
pub const BURST_SHARE: f64 = 0.05;

/// How [`load_chart_with`] draws.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LoadOptions {
    /// Every variant's arrivals as a line on one shared axis, instead of one panel per variant.
    pub overlay: bool,
    /// A logarithmic y axis (1, 10, 100, ...), for bursts next to long low tails. Without it
    /// (and without `linear_y`) the axis is logarithmic anyway when the first burst dwarfs the
    /// rest (see [`BURST_RATIO`]).
    pub log_y: bool,
    /// A linear y axis even when the first burst dwarfs the rest.
    pub linear_y: bool,
    /// Windows to shade, per variant in report order (see [`crate::marks::model_windows`]). A variant
    /// without an entry here gets its summary's trigger window (`trigger_from_ms`..`trigger_to_ms`).
    pub windows: Vec<Vec<Shade>>,
    /// In the panels (not `overlay`), retries split by attempt number, one shade of the
    /// variant's colour each (the series' `attempts`; a variant without them is drawn as usual).
    pub by_attempt: bool,
    /// How many replications (`--seeds N`) the numbers are the means of; 0 or 1 for one run.
    pub seeds: u32,
}

/// One variant's data, cut to the chart's time range and merged to its columns.
pub(super) struct LoadPanel<'a> {
    pub(super) index: usize,
    pub(super) v: &'a VariantResult,
    pub(super) bucket: f64,
    pub(super) first: Vec<u64>,
    pub(super) total: Vec<u64>,
    pub(super) goodput: Vec<u64>,
    /// With `by_attempt`: the arrivals of attempts 1..=k stacked, for each k from 2 up (the
    /// last is `total`); empty otherwise.
    pub(super) layers: Vec<Vec<u64>>,
    pub(super) windows: Vec<Shade>,
    pub(super) recovered_at: Option<f64>,
    /// Arrivals after the end of the axis.
    pub(super) cut: u64,
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
    let n = report.variants.len();
    let raw: Vec<Series> = report.variants.iter().map(arrivals).collect();
    let windows = variant_windows(report, &opt.windows);
    let end_ms = near_ceil(time_end(report, &raw, &windows));
    // Columns: the buckets before the end, merged when too many.
    let max_buckets = report
        .variants
        .iter()
        .map(|v| (end_ms / bucket_ms(v)).ceil() as usize)
        .max()
        .unwrap_or(1);
    let factor = max_buckets.div_ceil(MAX_COLUMNS).max(1);
    let panels = load_panels(report, opt, &raw, &windows, end_ms, factor);
    let burst = first_burst(&panels, factor, end_ms);
    let log_y = opt.log_y || (!opt.linear_y && burst.is_some());
    let axes = LoadAxes::of(&panels, factor, end_ms, log_y);
    let notes = load_notes(&panels, opt, end_ms, burst, log_y);
    let entries = load_legend(&panels, opt);
    let extra_rows = (legend_rows(18, &entries) - 1) * LEGEND_ROW;
    let header_h = LOAD_HEADER + extra_rows as u32 + 22 * notes.len() as u32;
    let panel_h = if opt.overlay {
        LOAD_PANEL * 2
    } else {
        LOAD_PANEL
    };
    let rows = if opt.overlay { 1 } else { n.max(1) };
    let height = header_h + panel_h * rows as u32;

    render(LOAD, (WIDTH, height), |root| {
        let (header, body) = root.split_vertically(header_h);
        let what = if opt.overlay {
            "arrivals at the server, every variant on one axis"
        } else {
            "arrivals at the server"
        };
        header
            .draw(&Text::new(
                heading(report, what, opt.seeds),
                (16, 10),
                bold(20),
            ))
            .map_err(chart_err(LOAD))?;
        if n == 0 {
            return empty(&body, LOAD);
        }
        legend(&header, LOAD, (18, 46), &entries)?;
        for (k, note) in notes.iter().enumerate() {
            header
                .draw(&Text::new(
                    note.clone(),
                    (18, 66 + extra_rows + 22 * k as i32),
                    font(14),
                ))
                .map_err(chart_err(LOAD))?;
        }
        let areas = body.split_evenly((rows, 1));
        draw_load_panels(&areas, &panels, opt, &axes)
    })
}

const LOAD: &str = "load";

/// A variant's first attempts, all arrivals and goodput per bucket.
type Series = (Vec<u64>, Vec<u64>, Vec<u64>);

/// Where the time axis ends (before rounding): when [`TIME_QUANTILE`] of every variant's
/// arrivals are in, or after every window and recovery mark; the data's end when that is near.
fn time_end(report: &RunReport, raw: &[Series], windows: &[Vec<Shade>]) -> f64 {
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
    end
}

/// Each variant's series cut at `end_ms` and merged `factor` buckets to a column.
fn load_panels<'a>(
    report: &'a RunReport,
    opt: &LoadOptions,
    raw: &[Series],
    windows: &[Vec<Shade>],
    end_ms: f64,
    factor: usize,
) -> Vec<LoadPanel<'a>> {
    report
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
        .collect()
}

/// The axes every panel shares: the scale, the y maximum and log choice, the descriptions.
struct LoadAxes {
    scale: Scale,
    log_y: bool,
    y_max: f64,
    x_desc: String,
    y_desc: String,
    column_ms: f64,
}

impl LoadAxes {
    fn of(panels: &[LoadPanel], factor: usize, end_ms: f64, log_y: bool) -> LoadAxes {
        let seconds = end_ms >= 2000.0;
        let unit = if seconds { 1000.0 } else { 1.0 };
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
        } else if log_y {
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
        let scale = Scale {
            x0: -end_ms / unit * 0.006,
            x1: end_ms / unit,
            unit,
            factor,
        };
        LoadAxes {
            scale,
            log_y,
            y_max,
            x_desc,
            y_desc,
            column_ms,
        }
    }
}

/// The header's notes: where the time axis was cut, and a first burst that dwarfs the rest.
fn load_notes(
    panels: &[LoadPanel],
    opt: &LoadOptions,
    end_ms: f64,
    burst: Option<(f64, f64)>,
    log_y: bool,
) -> Vec<String> {
    let mut notes: Vec<String> = Vec::new();
    if panels.iter().any(|p| p.cut > 0) {
        notes.push(format!(
            "The time axis ends at {}, by when {}% of all arrivals are in; the later ones are counted in the titles.",
            fmt::duration(end_ms),
            fmt::trim(TIME_QUANTILE * 100.0)
        ));
    }
    if let (Some((peak, median)), false) = (burst, opt.log_y) {
        let ratio = format!("{} times", fmt::int((peak / median).floor() as u64));
        notes.push(if log_y {
            format!(
                "The y axis is logarithmic: the first burst ({} per column) is {ratio} the median column ({}); --linear-y draws it linear.",
                fmt::int(peak as u64),
                fmt::int(median as u64)
            )
        } else {
            format!(
                "The first burst ({} per column) is {ratio} the median column ({}); --log-y shows the rest.",
                fmt::int(peak as u64),
                fmt::int(median as u64)
            )
        });
    }
    notes
}

/// Whether the panels draw goodput (not in the overlay).
fn any_goodput(panels: &[LoadPanel], opt: &LoadOptions) -> bool {
    !opt.overlay && panels.iter().any(|p| p.goodput.iter().any(|&g| g > 0))
}

/// The legend: the overlay's lines, or first attempts and retries (by attempt when split),
/// goodput, then the windows and the recovery mark when any panel has them.
fn load_legend(panels: &[LoadPanel], opt: &LoadOptions) -> Vec<(Swatch, String)> {
    let mut entries: Vec<(Swatch, String)> = Vec::new();
    if opt.overlay {
        for p in panels {
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
        if any_goodput(panels, opt) {
            entries.push((Swatch::Line(GOODPUT), "goodput (intents succeeded)".into()));
        }
    }
    if panels.iter().any(|p| !p.windows.is_empty()) {
        entries.push((
            Swatch::Box(WINDOW),
            "outage / capacity drop / load spike".into(),
        ));
    }
    if panels.iter().any(|p| p.recovered_at.is_some()) {
        entries.push((Swatch::Dashed(MARK), "goodput recovered".into()));
    }
    entries
}

/// The panels: one overlaid, or one per variant, the x axis described under the last.
fn draw_load_panels(
    areas: &[DrawingArea<SVGBackend<'_>, Shift>],
    panels: &[LoadPanel],
    opt: &LoadOptions,
    axes: &LoadAxes,
) -> Result<(), ReportError> {
    let (scale, x_desc, y_desc) = (&axes.scale, axes.x_desc.as_str(), axes.y_desc.as_str());
    if opt.overlay {
        let title = format!(
            "first attempts + retries per {}, one line per variant",
            fmt::duration(axes.column_ms)
        );
        let spec = PanelSpec {
            scale,
            title: &title,
            panels,
            overlay: true,
            goodput: false,
            x_desc,
            y_desc,
        };
        return draw_y(axes.log_y, axes.y_max, |y| spec.draw(&areas[0], y));
    }
    let goodput = any_goodput(panels, opt);
    for (i, (p, area)) in panels.iter().zip(areas).enumerate() {
        let title = panel_title(p);
        let last = i + 1 == panels.len();
        let spec = PanelSpec {
            scale,
            title: &title,
            panels: std::slice::from_ref(p),
            overlay: false,
            goodput,
            x_desc: if last { x_desc } else { "" },
            y_desc,
        };
        draw_y(axes.log_y, axes.y_max, |y| spec.draw(area, y))?;
    }
    Ok(())
}

/// A variant's panel title: its peak, the retry waves' peaks (by attempt), its recovery and the
/// arrivals after the axis.
fn panel_title(p: &LoadPanel) -> String {
    let s = &p.v.summary;
    let mut title = format!(
        "{}: peak {} arrivals per {} ({} retries)",
        p.v.name,
        fmt::int(s.peak_arrivals),
        fmt::duration(p.bucket),
        fmt::int(s.peak_retries),
    );
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
    title
}

/// When the first burst dwarfs the rest (see [`BURST_RATIO`]): the tallest column and the
/// median of the other non-zero columns, every panel pooled; `None` otherwise.
pub(super) fn first_burst(panels: &[LoadPanel], factor: usize, end_ms: f64) -> Option<(f64, f64)> {
    // The tallest column (the first of equals, panels in order) and where it is.
    let mut top: Option<(u64, usize, usize, f64)> = None;
    for (i, p) in panels.iter().enumerate() {
        let width = p.bucket * factor as f64;
        for (j, &v) in p.total.iter().enumerate() {
            if v > 0 && top.is_none_or(|t| v > t.0) {
                top = Some((v, i, j, j as f64 * width));
            }
        }
    }
    let (peak, pi, pj, at) = top?;
    if at >= BURST_SHARE * end_ms {
        return None;
    }
    let mut rest: Vec<u64> = panels
        .iter()
        .enumerate()
        .flat_map(|(i, p)| {
            p.total
                .iter()
                .enumerate()
                .filter(move |&(j, &v)| v > 0 && (i, j) != (pi, pj))
                .map(|(_, &v)| v)
        })
        .collect();
    if rest.is_empty() {
        return None;
    }
    rest.sort_unstable();
    let median = rest[(rest.len() - 1) / 2] as f64;
    (peak as f64 > BURST_RATIO * median).then_some((peak as f64, median))
}
