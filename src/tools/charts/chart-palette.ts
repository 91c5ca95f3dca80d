/**
 * Colours that still read when printed in grey: each series colour sits at its own lightness step
 * (relative luminance noted beside it), and series past the third also get a pattern (ECharts
 * decals) so neighbours never depend on hue alone.
 */

/** Series colours in the order series come; luminance 0.21 / 0.49 / 0.85 / 0.12 / 0.69 / 0.36. */
export const SERIES_COLOURS = ['#a4161a', '#40916c', '#d9d9d9', '#1d2d44', '#f4a261', '#5c677d'];

/** Heat map ramp: light to dark, so a larger number is darker in colour and in grey alike. */
export const HEAT_RAMP = ['#f7fbff', '#c6dbef', '#6baed6', '#2171b5', '#08306b'];

/** A single bar series, and its emphasised bars (the goal's segment). */
export const BAR_COLOUR = '#5c677d';
export const HIGHLIGHT_COLOUR = '#1d2d44';

export const TEXT_COLOUR = '#222222';
export const AXIS_COLOUR = '#555555';

/**
 * Latin, accented and CJK glyphs: the usual sans-serif faces first, then CJK faces on Linux, macOS
 * and Windows, so a chart opened anywhere draws 同步 and "Sincronización" with real glyphs.
 */
export const FONT_FAMILY =
  'DejaVu Sans, Noto Sans, Helvetica, Arial, Noto Sans CJK SC, Source Han Sans SC, WenQuanYi Micro Hei, PingFang SC, Hiragino Sans, Microsoft YaHei, sans-serif';
