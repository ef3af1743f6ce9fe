package main

import (
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// panel is one grouped bar chart: values[series][group].
type panel struct {
	title, ylabel string
	groups        []string
	series        []string
	values        [][]float64
}

// One fixed colour per library, the same in every chart.
var libColor = map[string]color.Color{
	libSyncguard:      color.RGBA{R: 0x1b, G: 0x9e, B: 0x77, A: 0xff},
	libRedislock:      color.RGBA{R: 0xd9, G: 0x5f, B: 0x02, A: 0xff},
	libRedsync:        color.RGBA{R: 0x75, G: 0x70, B: 0xb3, A: 0xff},
	libRueidis:        color.RGBA{R: 0xe7, G: 0x29, B: 0x8a, A: 0xff},
	libRaw:            color.RGBA{R: 0x99, G: 0x99, B: 0x99, A: 0xff},
	libSpecMin:        color.RGBA{R: 0x44, G: 0x44, B: 0x44, A: 0xff},
	libRedislockAP:    color.RGBA{R: 0xf4, G: 0xa5, B: 0x82, A: 0xff},
	libSyncguardCTE:   color.RGBA{R: 0x66, G: 0xc2, B: 0xa5, A: 0xff},
	libSyncguardAP:    color.RGBA{R: 0xa6, G: 0xd8, B: 0x54, A: 0xff},
	libSpecMinRueidis: color.RGBA{R: 0x88, G: 0x88, B: 0x88, A: 0xff},
}

func (pn panel) plot() (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = pn.title
	p.Title.TextStyle.Font.Size = vg.Points(10)
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	p.Y.Label.Text = pn.ylabel
	p.Y.Min = 0
	n := len(pn.series)
	w := vg.Points(float64(min(16, 60/max(n, 1))))
	top := 0.0
	for i, s := range pn.series {
		bars, err := plotter.NewBarChart(plotter.Values(pn.values[i]), w)
		if err != nil {
			return nil, err
		}
		bars.LineStyle.Width = 0
		bars.Color = libColor[s]
		bars.Offset = vg.Length(float64(i)-float64(n-1)/2) * w
		p.Add(bars)
		p.Legend.Add(s, bars)
		for _, v := range pn.values[i] {
			top = max(top, v)
		}
	}
	if top == 0 {
		top = 1
	}
	p.Y.Max = top * 1.6 // headroom for the legend
	p.Legend.Top = true
	p.Legend.Left = true
	p.Add(plotter.NewGrid())
	p.NominalX(pn.groups...)
	return p, nil
}

func renderPNG(path string, panels []panel) error {
	var row []*plot.Plot
	for _, pn := range panels {
		p, err := pn.plot()
		if err != nil {
			return err
		}
		row = append(row, p)
	}
	width := vg.Length(len(panels)) * 13 * vg.Centimeter
	img := vgimg.NewWith(vgimg.UseWH(width, 9*vg.Centimeter), vgimg.UseDPI(110))
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: len(row), PadX: vg.Centimeter, PadY: vg.Millimeter * 3,
		PadTop: vg.Millimeter * 3, PadBottom: vg.Millimeter * 3, PadLeft: vg.Millimeter * 3, PadRight: vg.Millimeter * 5}
	canvases := plot.Align([][]*plot.Plot{row}, tiles, dc)
	for j, p := range row {
		p.Draw(canvases[0][j])
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

func msf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// writeCharts writes one PNG per workload that ran into dir and returns their names.
func writeCharts(r *results, dir string) ([]string, error) {
	var written []string
	write := func(name string, panels []panel) error {
		if err := renderPNG(filepath.Join(dir, name), panels); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		written = append(written, name)
		return nil
	}
	if len(r.distinct) > 0 {
		var groups []string
		for _, g := range r.cfg.conc {
			groups = append(groups, fmt.Sprintf("%d goroutines", g))
		}
		// series: the libraries that ran under kind k; f: a figure of a row
		series := func(k ctxKind, f func(distinctResult) float64) ([]string, [][]float64) {
			var names []string
			var vals [][]float64
			for _, l := range libraries {
				if _, ok := r.findK(r.cfg.conc[0], k, l.name); !ok {
					continue
				}
				var vs []float64
				for _, g := range r.cfg.conc {
					d, _ := r.findK(g, k, l.name)
					vs = append(vs, f(d))
				}
				names = append(names, l.name)
				vals = append(vals, vs)
			}
			return names, vals
		}
		var panels []panel
		for _, k := range r.cfg.kinds {
			names, vals := series(k, distinctResult.Rate)
			panels = append(panels, panel{"Distinct keys, " + k.String() + ": acquire+release cycles/s (higher is better)", "cycles/s", groups, names, vals})
		}
		k := r.refKind()
		names, vals := series(k, distinctResult.CmdUs)
		panels = append(panels, panel{"Distinct keys, " + k.String() + ": Redis command µs per cycle (lower is better)", "µs", groups, names, vals})
		names, vals = series(k, func(d distinctResult) float64 { return msf(d.P99) })
		panels = append(panels, panel{"Distinct keys, " + k.String() + ": p99 latency per cycle (lower is better)", "ms", groups, names, vals})
		if err := write("chart-distinct.png", panels); err != nil {
			return written, err
		}
	}
	if len(r.hot) > 0 {
		var groups, series []string
		for _, h := range r.cfg.holds {
			groups = append(groups, "hold "+h.String())
		}
		var rate, p50 [][]float64
		for _, l := range libraries {
			if _, ok := r.hotFind(r.cfg.holds[0], l.name); !ok {
				continue
			}
			var rs, ps []float64
			for _, hold := range r.cfg.holds {
				h, _ := r.hotFind(hold, l.name)
				rs = append(rs, h.Rate())
				ps = append(ps, msf(h.P50))
			}
			series = append(series, l.name)
			rate = append(rate, rs)
			p50 = append(p50, ps)
		}
		if err := write("chart-handoff.png", []panel{
			{fmt.Sprintf("Hand-off harness (1 process, %d goroutines): acquisitions/s", r.cfg.contenders), "acquisitions/s", groups, series, rate},
			{"Hand-off harness: p50 handoff, release to next acquire", "ms", groups, series, p50},
		}); err != nil {
			return written, err
		}
	}
	if len(r.fleet) > 0 {
		var groups, series []string
		for _, h := range r.cfg.holds {
			groups = append(groups, "hold "+h.String())
		}
		var rate, maxw, cmds [][]float64
		for _, l := range libraries {
			if _, ok := r.fleetFind(r.cfg.holds[0], l.name); !ok {
				continue
			}
			var rs, ws, cs []float64
			for _, hold := range r.cfg.holds {
				f, _ := r.fleetFind(hold, l.name)
				rs = append(rs, f.Rate())
				ws = append(ws, msf(f.MaxWait))
				cs = append(cs, f.CmdsPerAcq())
			}
			series = append(series, l.name)
			rate, maxw, cmds = append(rate, rs), append(maxw, ws), append(cmds, cs)
		}
		n := fmt.Sprintf("%d processes x %d goroutines", r.cfg.fleetProcs, r.cfg.fleetG)
		if err := write("chart-hotkey.png", []panel{
			{"Hot key, " + n + ": acquisitions/s (higher is better)", "acquisitions/s", groups, series, rate},
			{"Hot key, " + n + ": max wait (lower is better)", "ms", groups, series, maxw},
			{"Hot key, " + n + ": Redis commands / acquisition (lower is better)", "commands", groups, series, cmds},
		}); err != nil {
			return written, err
		}
	}
	if len(r.fanout) > 0 {
		var groups, series []string
		for _, n := range r.cfg.fanoutIdle {
			groups = append(groups, fmt.Sprintf("%d idle instances", n))
		}
		var rate [][]float64
		for _, l := range libraries {
			if _, ok := r.fanoutFind(r.cfg.fanoutIdle[0], l.name); !ok {
				continue
			}
			var rs []float64
			for _, n := range r.cfg.fanoutIdle {
				f, _ := r.fanoutFind(n, l.name)
				rs = append(rs, f.Rate())
			}
			series = append(series, l.name)
			rate = append(rate, rs)
		}
		if err := write("chart-fanout.png", []panel{
			{fmt.Sprintf("Distinct keys, %d goroutines, next to idle instances that waited before: cycles/s", r.cfg.fanoutG), "cycles/s", groups, series, rate},
		}); err != nil {
			return written, err
		}
	}
	if len(r.keep) > 0 {
		var series []string
		var rt, gr, cpu [][]float64
		for _, k := range r.keep {
			series = append(series, k.Lib)
			rt = append(rt, []float64{k.RTPerSec()})
			gr = append(gr, []float64{float64(k.Goroutines)})
			cpu = append(cpu, []float64{100 * k.CPU.Seconds() / k.Seconds})
		}
		g := []string{fmt.Sprintf("%d leases, TTL %v", r.cfg.keepN, r.cfg.keepTTL)}
		if err := write("chart-keepalive.png", []panel{
			{"Keep-alive: Redis round trips/s (lower is better)", "round trips/s", g, series, rt},
			{"Keep-alive: client goroutines (lower is better)", "goroutines", g, series, gr},
			{"Keep-alive: client CPU (lower is better)", "% of one core", g, series, cpu},
		}); err != nil {
			return written, err
		}
	}
	return written, nil
}
