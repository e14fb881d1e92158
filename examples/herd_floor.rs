//! The herd's floor as a program, for end-to-end time and memory beside `retrystorm run`: the
//! same `EventQueue` and backoff draws (`Stream(seed, client, Backoff, retries made)`) with one
//! event per attempt and no per-client state, so what it costs no engine can go under. The
//! bench `benches/scenarios.rs` (`herd/floor`) times the same loop in-process and checks it
//! against the engine.
//!
//! ```text
//! cargo build --release --example herd_floor
//! target/release/examples/herd_floor CLIENTS   # prints attempts, retries, peak retries, events
//! ```

use retrystorm::load::{Override, load};
use retrystorm::queue::EventQueue;
use retrystorm::rng::{Purpose, Stream};
use retrystorm::time::Time;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let clients: u64 = std::env::args()
        .nth(1)
        .ok_or("usage: herd_floor CLIENTS")?
        .parse()?;
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/models/thundering-herd.toml");
    let sets = [Override::parse(&format!("workload.clients={clients}"))?];
    let m = load(path, &std::fs::read_to_string(path)?, &sets)?
        .variants
        .into_iter()
        .find(|m| m.name == "full")
        .ok_or("no variant full")?;
    let (seed, attempts, bucket, backoff) =
        (m.seed, m.retry.max_attempts, m.bucket.0, m.retry.backoff());
    // An event is `client << 16 | attempt` in one u64.
    // Clients start one after another at time 0, each start queueing the next (as the engine's
    // burst does), so the queue holds one pending timer per started client and nothing else.
    let mut q: EventQueue<u64> = EventQueue::new();
    if clients > 0 {
        q.push(Time::ZERO, 0);
    }
    let mut per_bucket: Vec<u32> = Vec::new();
    let (mut sent, mut retries, mut events) = (0u64, 0u64, 0u64);
    while let Some((now, ev)) = q.pop() {
        events += 1;
        sent += 1;
        let (client, attempt) = (ev >> 16, (ev & 0xffff) as u32);
        if attempt == 0 && client + 1 < clients {
            q.push(now, (client + 1) << 16);
        }
        if attempt > 0 {
            retries += 1;
            let i = (now.0 / bucket) as usize;
            if per_bucket.len() <= i {
                per_bucket.resize(i + 1, 0);
            }
            per_bucket[i] += 1;
        }
        if attempt + 1 < attempts {
            let mut s = Stream::new(seed, client, Purpose::Backoff, u64::from(attempt));
            let delay = backoff.delay(attempt, None, &mut s);
            q.push(now.after(delay), client << 16 | u64::from(attempt + 1));
        }
    }
    let peak = per_bucket.iter().copied().max().unwrap_or(0);
    println!("attempts {sent} retries {retries} peak_retries {peak} events {events}");
    Ok(())
}
