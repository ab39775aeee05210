//! Measurement: the readings taken when the warm-up ends and at each sample, and the arithmetic
//! that turns the flows' meters (`trace::meters`) and the links' counters into the result
//! tables (`trace::results`). The event loop only feeds the meters and calls these at the
//! warm-up, the samples and the end; it computes nothing itself.

use super::flow::Flow;
use super::RunConfig;
use crate::ids::{FlowId, LinkId, NodeId, PathId, RouteId};
use crate::net::link::{DropCause, Link, LinkCounters};
use crate::time::SimTime;
use crate::trace::histogram::LogHistogram;
use crate::trace::meters::FlowCounters;
use crate::trace::results::{
    jain_index, DropTable, FlowSeries, FlowTable, LinkSeries, LinkTable, PathSeries, PathTable,
    PickTable, RefusalTable, RunResult,
};
use crate::transport::multipath::connection::SubflowStats;
use crate::transport::Transport;

/// The run's measurements: link readings, warm-up state and the sampled series.
pub struct Measurements {
    pub warmed_up: bool,
    link_at_warmup: Vec<LinkCounters>,
    /// Link counters as of the end of the last slice.
    link_now: Vec<LinkCounters>,
    flow_series: FlowSeries,
    link_series: LinkSeries,
    path_series: PathSeries,
    drops: DropTable,
}

impl Measurements {
    pub fn new(config: &RunConfig, links: usize) -> Self {
        Measurements {
            warmed_up: config.warmup == SimTime::ZERO,
            link_at_warmup: vec![LinkCounters::default(); links],
            link_now: vec![LinkCounters::default(); links],
            flow_series: FlowSeries::default(),
            link_series: LinkSeries::default(),
            path_series: PathSeries::default(),
            drops: DropTable::default(),
        }
    }

    /// A packet was dropped (kept when `trace_drops` is on).
    /// Rows of the drops table so far.
    pub fn drop_rows(&self) -> u64 {
        self.drops.time_s.len() as u64
    }

    pub fn on_drop(
        &mut self,
        now: SimTime,
        flow: FlowId,
        link: LinkId,
        cause: DropCause,
        feedback: bool,
        path: PathId,
    ) {
        let d = &mut self.drops;
        d.time_s.push(now.as_secs_f64());
        d.flow.push(flow.index() as u32);
        d.link.push(link.index() as u32);
        d.cause.push(
            match cause {
                DropCause::Queue => "queue",
                DropCause::LossModel => "loss",
                DropCause::LinkDown => "link_down",
            }
            .to_string(),
        );
        d.feedback.push(u64::from(feedback));
        d.path.push(path.index() as u64);
    }

    /// The warm-up ends: read every counter.
    pub fn on_warmup_end(&mut self, now: SimTime, flows: &mut [Flow], links: &mut [Link]) {
        for f in flows {
            f.meters.at_warmup = counters(f);
            for p in &mut f.meters.paths {
                p.at_warmup = p.counters;
            }
            f.meters.applications_at_warmup = (0..f.transport.application_flows())
                .map(|k| f.transport.application_stats(k))
                .collect();
            if let Some(c) = f.transport.as_mptcp() {
                f.meters.connection_at_warmup = c.connection_stats(now);
                for (i, p) in f.meters.paths.iter_mut().enumerate() {
                    p.subflow_at_warmup = c.subflow_stats(now, i);
                }
            }
        }
        for (i, l) in links.iter_mut().enumerate() {
            self.link_at_warmup[i] = l.counters_at(now);
        }
        self.warmed_up = true;
    }

    /// A slice of the run ended at `now`: read the link counters for [`Measurements::results`].
    pub fn on_slice_end(&mut self, now: SimTime, links: &mut [Link]) {
        for (i, l) in links.iter_mut().enumerate() {
            self.link_now[i] = l.counters_at(now);
        }
    }

    /// Takes one time-series sample (`dt` after the previous one).
    pub fn sample(&mut self, now: SimTime, dt: SimTime, flows: &mut [Flow], links: &mut [Link]) {
        let t = now.as_secs_f64();
        let fs = &mut self.flow_series;
        let ps = &mut self.path_series;
        for (i, f) in flows.iter_mut().enumerate() {
            let delivered = f.transport.stats().delivered_bytes;
            let m = &mut f.meters;
            let goodput = (delivered - m.delivered_at_last_sample) as f64 * 8.0 / dt.as_secs_f64();
            m.delivered_at_last_sample = delivered;
            let state = f.transport.path_state(None);
            fs.time_s.push(t);
            fs.flow.push(i as u32);
            fs.cwnd_bytes
                .push(state.cwnd_bytes.map_or(f64::NAN, |c| c as f64));
            fs.srtt_s
                .push(state.srtt.map_or(f64::NAN, SimTime::as_secs_f64));
            fs.goodput_bps.push(goodput);
            // The columns a protocol declares its own (`Transport::column`), NaN for others.
            let column = |name| f.transport.column(name).unwrap_or(f64::NAN);
            fs.allowed_rate_bps.push(column("allowed_rate_bps"));
            fs.loss_event_rate.push(column("loss_event_rate"));
            fs.packets_per_loss_event
                .push(column("packets_per_loss_event"));
            for p in 0..m.paths.len() {
                let state = f.transport.path_state(Some(PathId::from_index(p)));
                ps.time_s.push(t);
                ps.flow.push(i as u32);
                ps.path.push(p as u64);
                ps.cwnd_bytes
                    .push(state.cwnd_bytes.map_or(f64::NAN, |c| c as f64));
                ps.srtt_s
                    .push(state.srtt.map_or(f64::NAN, SimTime::as_secs_f64));
                ps.in_flight_bytes
                    .push(state.in_flight_bytes.map_or(f64::NAN, |b| b as f64));
                ps.capacity_estimate
                    .push(state.estimate.unwrap_or(f64::NAN));
            }
        }
        // The application flows of aggregates, after every flow (their rows in `flows`).
        let mut row = flows.len();
        for f in flows.iter_mut() {
            let n = f.transport.application_flows();
            if n == 0 {
                continue;
            }
            let state = f.transport.path_state(None);
            let m = &mut f.meters;
            m.application_delivered_at_last_sample.resize(n, 0);
            for k in 0..n {
                let a = f.transport.application_stats(k);
                let last = &mut m.application_delivered_at_last_sample[k];
                let goodput = (a.delivered_bytes - *last) as f64 * 8.0 / dt.as_secs_f64();
                *last = a.delivered_bytes;
                fs.time_s.push(t);
                fs.flow.push(row as u32);
                // An application flow's window: its share of the aggregate window.
                fs.cwnd_bytes
                    .push(state.cwnd_bytes.map_or(f64::NAN, |c| a.share * c as f64));
                fs.srtt_s
                    .push(state.srtt.map_or(f64::NAN, SimTime::as_secs_f64));
                fs.goodput_bps.push(goodput);
                fs.allowed_rate_bps.push(f64::NAN);
                fs.loss_event_rate.push(f64::NAN);
                fs.packets_per_loss_event.push(f64::NAN);
                row += 1;
            }
        }
        let ls = &mut self.link_series;
        for (j, l) in links.iter_mut().enumerate() {
            let (packets, bytes) = l.queue_len(now);
            ls.time_s.push(t);
            ls.link.push(j as u32);
            ls.queue_packets.push(packets as f64);
            ls.queue_bytes.push(bytes as f64);
        }
    }

    /// The result tables over the measurement window [warmup, now]: after a whole run that
    /// is [warmup, duration]; after a slice that stopped earlier, the part simulated so far
    /// (rates and utilisations are NaN before the warm-up ends).
    #[allow(clippy::too_many_arguments)]
    pub fn results(
        &self,
        now: SimTime,
        config: &RunConfig,
        flows: &[Flow],
        links: &[Link],
        routes: &[Box<[LinkId]>],
        node_names: &[String],
        events: u64,
        delivered_packets: u64,
    ) -> RunResult {
        let window = now.min(config.duration).saturating_sub(config.warmup);
        let interval = window.as_secs_f64();
        let per_s = |x: u64| {
            if interval > 0.0 {
                x as f64 / interval
            } else {
                f64::NAN
            }
        };
        let secs = |x: Option<f64>| x.map_or(f64::NAN, |ns| ns * 1e-9);
        let node = |n: NodeId| node_names[n.index()].clone();
        let route_names = |r: RouteId| {
            let route = &routes[r.index()];
            let mut names: Vec<&str> = Vec::with_capacity(route.len() + 1);
            if let Some(first) = route.first() {
                names.push(&node_names[links[first.index()].from.index()]);
            }
            names.extend(
                route
                    .iter()
                    .map(|l| node_names[links[l.index()].to.index()].as_str()),
            );
            names.join(">")
        };

        let until = now.min(config.duration);
        let mut ft = FlowTable::default();
        let mut pt = PathTable::default();
        for (i, f) in flows.iter().enumerate() {
            let now = counters(f);
            let w = f.meters.at_warmup;
            let (t, tw) = (now.transport, w.transport);
            ft.name.push(f.name.clone());
            ft.aggregate_name.push(String::new());
            ft.kind.push(f.kind.to_string());
            ft.cc.push(f.cc.to_string());
            ft.src.push(node(f.src));
            ft.dst.push(node(f.dst));
            ft.start_s.push(f.start.as_secs_f64());
            ft.goodput_bps
                .push(per_s(t.delivered_bytes - tw.delivered_bytes) * 8.0);
            ft.throughput_bps
                .push(per_s(now.wire_bytes_sent - w.wire_bytes_sent) * 8.0);
            ft.bytes_delivered
                .push(t.delivered_bytes - tw.delivered_bytes);
            ft.packets_sent
                .push(now.data_packets_sent - w.data_packets_sent);
            ft.retransmissions
                .push(t.retransmissions - tw.retransmissions);
            ft.fast_retransmits
                .push(t.fast_retransmits - tw.fast_retransmits);
            ft.timeouts.push(t.timeouts - tw.timeouts);
            ft.drops.push(now.drops - w.drops);
            let h: &LogHistogram = &f.meters.rtt.flow();
            ft.rtt_samples.push(h.count());
            ft.rtt_mean_s.push(secs(h.mean()));
            ft.rtt_min_s.push(secs(h.min().map(|v| v as f64)));
            ft.rtt_p50_s.push(secs(h.quantile(0.5)));
            ft.rtt_p95_s.push(secs(h.quantile(0.95)));
            ft.rtt_p99_s.push(secs(h.quantile(0.99)));
            ft.rtt_max_s.push(secs(h.max().map(|v| v as f64)));
            ft.completion_s
                .push(f.meters.completed_at.map_or(f64::NAN, |t| t.as_secs_f64()));
            let column = |name| f.transport.column(name).unwrap_or(f64::NAN);
            ft.loss_event_rate.push(column("loss_event_rate"));
            ft.packets_per_loss_event
                .push(column("packets_per_loss_event"));
            ft.allowed_rate_bps.push(column("allowed_rate_bps"));
            let mptcp = f.transport.as_mptcp();
            match mptcp {
                Some(c) => {
                    let (cs, cw) = (c.connection_stats(until), f.meters.connection_at_warmup);
                    let ns = |a: u64, b: u64| a.saturating_sub(b) as f64 * 1e-9;
                    ft.rwnd_blocked_s
                        .push(ns(cs.window_blocked_ns, cw.window_blocked_ns));
                    ft.send_buffer_blocked_s
                        .push(ns(cs.send_buffer_blocked_ns, cw.send_buffer_blocked_ns));
                    let bytes = cs.delivery_delay_bytes - cw.delivery_delay_bytes;
                    ft.delivery_delay_mean_s.push(if bytes > 0 {
                        (cs.delivery_delay_area - cw.delivery_delay_area) as f64 / bytes as f64
                            * 1e-9
                    } else {
                        f64::NAN
                    });
                    ft.delivery_delay_max_s
                        .push(cs.delivery_delay_max_ns as f64 * 1e-9);
                    ft.reinjected_bytes
                        .push(cs.reinjected_bytes - cw.reinjected_bytes);
                    ft.max_out_of_order_bytes.push(cs.max_out_of_order_bytes);
                }
                None => {
                    ft.rwnd_blocked_s.push(f64::NAN);
                    ft.send_buffer_blocked_s.push(f64::NAN);
                    ft.delivery_delay_mean_s.push(f64::NAN);
                    ft.delivery_delay_max_s.push(f64::NAN);
                    ft.reinjected_bytes.push(0);
                    ft.max_out_of_order_bytes.push(0);
                }
            }
            let new_data_total: u64 = (0..f.meters.paths.len())
                .map(|p| {
                    mptcp.map_or(0, |c| {
                        c.subflow_stats(until, p).new_data_bytes
                            - f.meters.paths[p].subflow_at_warmup.new_data_bytes
                    })
                })
                .sum();
            for (p, m) in f.meters.paths.iter().enumerate() {
                let (c, cw) = (m.counters, m.at_warmup);
                pt.flow.push(i as u32);
                pt.path.push(p as u64);
                pt.route.push(route_names(f.paths[p].forward));
                pt.reverse_route.push(route_names(f.paths[p].reverse));
                pt.packets_sent.push(c.packets_sent - cw.packets_sent);
                pt.throughput_bps
                    .push(per_s(c.wire_bytes_sent - cw.wire_bytes_sent) * 8.0);
                pt.fast_retransmits
                    .push(c.fast_retransmits - cw.fast_retransmits);
                pt.timeouts.push(c.timeouts - cw.timeouts);
                let rtt = &f.meters.rtt.paths[p];
                pt.rtt_samples.push(rtt.count());
                pt.rtt_mean_s.push(secs(rtt.mean()));
                pt.rtt_min_s.push(secs(rtt.min().map(|v| v as f64)));
                let (sc, sw) = match mptcp {
                    Some(c) => (c.subflow_stats(until, p), m.subflow_at_warmup),
                    None => (SubflowStats::default(), SubflowStats::default()),
                };
                pt.bytes_sent.push(sc.bytes_sent - sw.bytes_sent);
                pt.retransmissions
                    .push(sc.retransmissions - sw.retransmissions);
                let new_data = sc.new_data_bytes - sw.new_data_bytes;
                pt.new_data_bytes.push(new_data);
                pt.reinjected_bytes
                    .push(sc.reinjected_bytes - sw.reinjected_bytes);
                pt.data_share.push(if new_data_total > 0 {
                    new_data as f64 / new_data_total as f64
                } else {
                    f64::NAN
                });
                let time = sc.cwnd_time_ns - sw.cwnd_time_ns;
                pt.cwnd_mean_bytes.push(if time > 0 {
                    (sc.cwnd_area - sw.cwnd_area) as f64 / time as f64
                } else {
                    f64::NAN
                });
                pt.cwnd_max_bytes.push(sc.cwnd_max_bytes);
                pt.penalisations.push(sc.penalisations - sw.penalisations);
            }
        }

        // The application flows of aggregates: one row each, after every flow, named
        // `<aggregate>.<k>`. What the transport does not count per application flow (wire
        // bytes, drops) is NaN or 0; the RTT columns are the aggregate's.
        let transport_rows = ft.name.len();
        for (i, f) in flows.iter().enumerate() {
            let n = f.transport.application_flows();
            for k in 0..n {
                let a = f.transport.application_stats(k);
                let w = f
                    .meters
                    .applications_at_warmup
                    .get(k)
                    .copied()
                    .unwrap_or_default();
                ft.name.push(format!("{}.{k}", f.name));
                ft.aggregate_name.push(f.name.clone());
                ft.kind.push(f.kind.to_string());
                ft.cc.push(f.cc.to_string());
                ft.src.push(node(f.src));
                ft.dst.push(node(f.dst));
                ft.start_s.push(f.start.as_secs_f64());
                let delivered = a.delivered_bytes - w.delivered_bytes;
                ft.goodput_bps.push(per_s(delivered) * 8.0);
                ft.throughput_bps.push(f64::NAN);
                ft.bytes_delivered.push(delivered);
                ft.packets_sent.push(a.packets_sent - w.packets_sent);
                ft.retransmissions
                    .push(a.retransmissions - w.retransmissions);
                ft.fast_retransmits
                    .push(a.fast_retransmits - w.fast_retransmits);
                ft.timeouts.push(a.timeouts - w.timeouts);
                ft.drops.push(0);
                ft.rtt_samples.push(ft.rtt_samples[i]);
                ft.rtt_mean_s.push(ft.rtt_mean_s[i]);
                ft.rtt_min_s.push(ft.rtt_min_s[i]);
                ft.rtt_p50_s.push(ft.rtt_p50_s[i]);
                ft.rtt_p95_s.push(ft.rtt_p95_s[i]);
                ft.rtt_p99_s.push(ft.rtt_p99_s[i]);
                ft.rtt_max_s.push(ft.rtt_max_s[i]);
                ft.completion_s
                    .push(a.completed_at.map_or(f64::NAN, SimTime::as_secs_f64));
                ft.rwnd_blocked_s.push(f64::NAN);
                ft.send_buffer_blocked_s.push(f64::NAN);
                ft.delivery_delay_mean_s.push(f64::NAN);
                ft.delivery_delay_max_s.push(f64::NAN);
                ft.reinjected_bytes.push(0);
                ft.max_out_of_order_bytes.push(0);
                ft.loss_event_rate.push(f64::NAN);
                ft.packets_per_loss_event.push(f64::NAN);
                ft.allowed_rate_bps.push(f64::NAN);
            }
        }

        let mut lt = LinkTable::default();
        let window_ns = window.as_nanos();
        let fraction = |x: f64| {
            if window_ns > 0 {
                x / window_ns as f64
            } else {
                f64::NAN
            }
        };
        for (i, l) in links.iter().enumerate() {
            let c = self.link_now[i];
            let w = self.link_at_warmup[i];
            lt.name.push(l.name.clone());
            lt.direction.push(l.direction().to_string());
            lt.from.push(node(l.from));
            lt.to.push(node(l.to));
            lt.rate_bps.push(l.rate.bps());
            // The fraction of the window the link spent serialising: both readings exclude
            // serialisation still to come (`Link::counters_at`), so the difference is the busy
            // time inside [warmup, duration] and never exceeds the window. (Bytes started in the
            // window over rate x window would count whole the packets cut by its edges.)
            lt.utilization
                .push(fraction((c.busy_ns - w.busy_ns) as f64));
            lt.tx_packets.push(c.tx_packets - w.tx_packets);
            lt.tx_bytes.push(c.tx_bytes - w.tx_bytes);
            lt.drops.push(c.queue_drops - w.queue_drops);
            lt.loss_drops.push(c.loss_drops - w.loss_drops);
            lt.down_drops.push(c.down_drops - w.down_drops);
            lt.mean_queue_packets.push(fraction(
                (c.queue_area_packets_ns - w.queue_area_packets_ns) as f64,
            ));
            lt.mean_queue_bytes.push(fraction(
                (c.queue_area_bytes_ns - w.queue_area_bytes_ns) as f64,
            ));
            lt.max_queue_packets.push(c.max_queue_packets);
        }
        let mut refusals = RefusalTable::default();
        for (i, f) in flows.iter().enumerate() {
            for q in f.local.iter().flat_map(|l| l.queues()) {
                refusals.flow.push(i as u32);
                refusals.link.push(q.link.index() as u32);
                refusals.refusals.push(q.total);
            }
        }
        // Over the flows themselves (an aggregate counts once, not with its parts).
        let jain_fairness = jain_index(&ft.goodput_bps[..transport_rows]);
        let picks = pick_table(flows);
        RunResult {
            seed: config.seed,
            duration_s: config.duration.as_secs_f64(),
            warmup_s: config.warmup.as_secs_f64(),
            flows: ft,
            links: lt,
            paths: pt,
            flow_series: self.flow_series.clone(),
            link_series: self.link_series.clone(),
            path_series: self.path_series.clone(),
            picks,
            drops: self.drops.clone(),
            refusals,
            events,
            delivered_packets,
            jain_fairness,
        }
    }
}

/// The scheduler decisions of every MPTCP flow that keeps them (`trace_picks`).
fn pick_table(flows: &[Flow]) -> PickTable {
    let mut t = PickTable::default();
    for (i, f) in flows.iter().enumerate() {
        let Some(c) = f.transport.as_mptcp() else {
            continue;
        };
        for p in c.picks() {
            t.time_s.push(p.time.as_secs_f64());
            t.flow.push(i as u32);
            t.subflow
                .push(p.subflows.iter().next().map_or(f64::NAN, |s| s as f64));
            t.copies.push(u64::from(p.subflows.len()));
            t.subflow_mask.push(u64::from(p.subflows.0));
            t.reason.push(p.reason.name().to_owned());
            t.dsn.push(p.dsn);
            t.reinjection.push(u64::from(p.is_reinjection));
        }
    }
    t
}

/// A flow's counters now.
pub fn counters(f: &Flow) -> FlowCounters {
    FlowCounters {
        data_packets_sent: f.meters.data_packets_sent,
        wire_bytes_sent: f.meters.wire_bytes_sent,
        drops: f.meters.drops,
        transport: f.transport.stats(),
    }
}
