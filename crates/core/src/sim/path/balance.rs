//! Choosing the replica of each attempt (`server.replicas`): a hop's load balancers,
//! the outlier detectors beside them, and the replicas its calls' attempts went to.
//!
//! A hop that calls a replicated tier keeps one [`Balancing`]. Its balancers are one shared
//! instance (a proxy in front of the tier) or one per client process at the top
//! (`balancer_scope = "client"`; below the top the caller is one process, as for budgets). Each
//! instance has its own stream of draws ([`Draws::balancer`], [`Draws::outlier`]), so a variant
//! that changes only the balancing sees the same arrivals, services, losses and backoffs.
//!
//! An attempt's route (its replica and send time) is kept per call slot until the call settles:
//! the balancer counts it active from the send to the moment its caller learns how it ended (an
//! answer, a timeout, or the call settling with it still out, when Envoy resets the upstream
//! request), and the detector records that ending. Detectors tick lazily: before any use at
//! `now`, every interval boundary up to `now` is run at its own time, which is what a timer would
//! have done since nothing else reaches the detector in between.

use super::spec::PathSpec;
use crate::base::rng::Stream;
use crate::base::time::Time;
use crate::model::HostPredicate;
use crate::policy::Class;
use crate::policy::Scope;
use crate::policy::balancer::retry_host::{self, Attempt, PreviousHosts};
use crate::policy::balancer::{Balancer, hosts_to_use};
use crate::policy::outlier::Detector;
use crate::sim::draws::Draws;

/// Where one attempt of a call went.
#[derive(Clone, Copy, Debug)]
struct Route {
    attempt: u16,
    replica: u16,
    /// Still counted active by the balancer.
    open: bool,
    sent: Time,
}

/// One balancer with its detector and their draws.
#[derive(Clone)]
struct Instance {
    balancer: Balancer,
    draw: Stream,
    detector: Option<Watched>,
    /// The replicas not ejected by the detector (or all, in panic), rebuilt only after the
    /// detector ejected or unejected one: a pick does not scan every replica.
    hosts: Vec<u32>,
    hosts_fresh: bool,
}

/// A detector, its draws, and each replica's ejection count as last seen (to log new ones).
#[derive(Clone)]
struct Watched {
    detector: Detector,
    draw: Stream,
    seen: Vec<u32>,
    enforced: u64,
}

/// A hop's balancing towards the replicated tier it calls.
#[derive(Clone)]
pub(super) struct Balancing {
    replicas: u32,
    shared: bool,
    instances: Vec<Instance>,
    predicate: HostPredicate,
    host_selection_retry_max_attempts: u32,
    panic_threshold: u32,
    /// The routes of each call slot's attempts, until the call settles.
    routes: Vec<Vec<Route>>,
    /// Every replica: what a balancer without a detector chooses among.
    all_hosts: Vec<u32>,
    /// Scratch: the replicas a call tried.
    previous: PreviousHosts,
    /// Ejections per replica over every detector, and when each began.
    pub(super) ejections: Vec<u64>,
    pub(super) ejection_log: Vec<(Time, u16)>,
}

impl Balancing {
    /// Hop `k`'s balancing, if the tier it calls has replicas; `processes` client processes at
    /// the top.
    pub(super) fn new(
        spec: &PathSpec,
        k: usize,
        processes: usize,
        draws: Draws,
    ) -> Option<Box<Self>> {
        let server = &spec.tiers[k].server;
        let b = server.balancer_spec()?;
        let shared = b.scope == Scope::Shared || k > 0;
        let n = if shared { 1 } else { processes };
        // An autoscaled tier's balancers know every slot; the serving ones are `all_hosts`.
        let replicas = server.replica_slots();
        let instances = (0..n as u64)
            .map(|i| {
                let mut draw = draws.balancer(k, i);
                let balancer = Balancer::new(b.kind, &b.params, replicas, Time::ZERO, &mut draw);
                let detector = server.outlier_detection.as_ref().map(|o| Watched {
                    detector: o.detector(replicas, Time::ZERO),
                    draw: draws.outlier(k, i),
                    seen: vec![0; replicas as usize],
                    enforced: 0,
                });
                Instance {
                    balancer,
                    draw,
                    detector,
                    hosts: Vec::new(),
                    hosts_fresh: false,
                }
            })
            .collect();
        let r = &spec.hops[k].retry;
        Some(Box::new(Balancing {
            replicas,
            shared,
            instances,
            predicate: r.retry_host_predicate,
            host_selection_retry_max_attempts: r
                .host_selection_retry_max_attempts
                .unwrap_or(retry_host::DEFAULT_HOST_SELECTION_RETRY_MAX_ATTEMPTS),
            panic_threshold: b.panic_threshold,
            routes: Vec::new(),
            all_hosts: (0..server.replicas).collect(),
            previous: PreviousHosts::default(),
            ejections: vec![0; replicas as usize],
            ejection_log: Vec::new(),
        }))
    }

    /// Every instance's picks and detector rolls draw from `draws` from now on (a forked run's
    /// branch, [`crate::sim::path::PathSim::fork`]): fresh streams of hop `k`'s instances.
    pub(super) fn rekey(&mut self, k: usize, draws: Draws) {
        for (i, inst) in self.instances.iter_mut().enumerate() {
            inst.draw = draws.balancer(k, i as u64);
            if let Some(w) = &mut inst.detector {
                w.draw = draws.outlier(k, i as u64);
            }
        }
    }

    /// Instances are kept per client process: calls must know their client.
    pub(super) fn per_client(&self) -> bool {
        !self.shared
    }

    /// The replica for attempt `attempt` of the call in `slot`, sent by `client` at `now`.
    pub(super) fn pick(&mut self, client: u32, slot: usize, attempt: u16, now: Time) -> u16 {
        if self.routes.len() <= slot {
            self.routes.resize_with(slot + 1, Vec::new);
        }
        if attempt == 0 {
            // A new call in a reused slot: nothing of the last one is open (it settled).
            self.routes[slot].clear();
        }
        let i = if self.shared { 0 } else { client as usize };
        self.catch_up(i, now);
        let replicas = self.replicas;
        let inst = &mut self.instances[i];
        let routes = &self.routes[slot];
        let serves = |r: u16| self.all_hosts.binary_search(&u32::from(r)).is_ok();
        let replica = match (self.predicate, routes.first()) {
            // The first try's replica, while it still serves (an autoscaler may remove it).
            (HostPredicate::SameHost, Some(first)) if serves(first.replica) => {
                u32::from(first.replica)
            }
            (predicate, _) => {
                let hosts = match &inst.detector {
                    None => &self.all_hosts,
                    Some(w) => {
                        if !inst.hosts_fresh {
                            let ejected = |r| w.detector.is_ejected(r);
                            hosts_to_use(replicas, ejected, self.panic_threshold, &mut inst.hosts);
                            inst.hosts_fresh = true;
                        }
                        &inst.hosts
                    }
                };
                let how = if predicate == HostPredicate::PreviousHosts && attempt > 0 {
                    self.previous.clear();
                    for r in routes {
                        self.previous.attempted(u32::from(r.replica));
                    }
                    Attempt::Retry {
                        previous: &self.previous,
                        max_attempts: self.host_selection_retry_max_attempts,
                    }
                } else {
                    Attempt::First
                };
                let balancer = &mut inst.balancer;
                retry_host::choose(balancer, hosts, how, &mut inst.draw, now)
                    .expect("hosts_to_use never leaves a replicated tier without hosts")
            }
        };
        inst.balancer.start(replica);
        self.routes[slot].push(Route {
            attempt,
            replica: replica as u16,
            open: true,
            sent: now,
        });
        replica as u16
    }

    /// The replicas an autoscaler has serving, in slot order: from now on the choice.
    pub(super) fn set_hosts(&mut self, hosts: Vec<u32>) {
        self.all_hosts = hosts;
    }

    /// The caller of the call in `slot` learned at `now` how attempt `attempt` ended: the
    /// balancer stops counting it and the detector records `class`.
    pub(super) fn ended(
        &mut self,
        client: u32,
        slot: usize,
        attempt: u16,
        class: Class,
        now: Time,
    ) {
        let Some(route) = self
            .routes
            .get_mut(slot)
            .and_then(|rs| rs.iter_mut().find(|r| r.attempt == attempt && r.open))
        else {
            return;
        };
        route.open = false;
        let (replica, sent) = (u32::from(route.replica), route.sent);
        let i = if self.shared { 0 } else { client as usize };
        self.catch_up(i, now);
        let inst = &mut self.instances[i];
        inst.balancer.finish(replica, sent, now);
        if let Some(w) = &mut inst.detector {
            w.detector.record(replica, class, now, &mut w.draw);
            if log_ejections(w, now, &mut self.ejections, &mut self.ejection_log) {
                inst.hosts_fresh = false;
            }
        }
    }

    /// The call in `slot` settled at `now`: attempts still out stop counting as active (Envoy
    /// resets the upstream requests of a finished downstream one); nothing is recorded.
    pub(super) fn settled(&mut self, client: u32, slot: usize, now: Time) {
        let Some(routes) = self.routes.get_mut(slot) else {
            return;
        };
        let i = if self.shared { 0 } else { client as usize };
        let balancer = &mut self.instances[i].balancer;
        for r in routes.iter_mut().filter(|r| r.open) {
            r.open = false;
            balancer.finish(u32::from(r.replica), r.sent, now);
        }
    }

    /// Runs every interval tick of instance `i`'s detector up to `now`, at its own time.
    fn catch_up(&mut self, i: usize, now: Time) {
        let inst = &mut self.instances[i];
        let Some(w) = &mut inst.detector else {
            return;
        };
        while w.detector.next_tick() <= now {
            let at = w.detector.next_tick();
            w.detector.tick(at, &mut w.draw);
            log_ejections(w, at, &mut self.ejections, &mut self.ejection_log);
            // A tick may uneject as well as eject.
            inst.hosts_fresh = false;
        }
    }

    /// Runs every detector's ticks up to the end of the run, so the ejection log is complete.
    pub(super) fn finish(&mut self, end: Time) {
        for i in 0..self.instances.len() {
            self.catch_up(i, end);
        }
    }
}

/// Logs the ejections `w`'s detector made since it was last looked at, as of `at`; whether it
/// made any.
fn log_ejections(
    w: &mut Watched,
    at: Time,
    totals: &mut [u64],
    log: &mut Vec<(Time, u16)>,
) -> bool {
    let enforced = w.detector.counts().enforced;
    if enforced == w.enforced {
        return false;
    }
    w.enforced = enforced;
    for (r, seen) in w.seen.iter_mut().enumerate() {
        let now = w.detector.ejections(r as u32);
        for _ in *seen..now {
            totals[r] += 1;
            log.push((at, r as u16));
        }
        *seen = now;
    }
    true
}
