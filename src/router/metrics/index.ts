// The router's Prometheus metrics, created once and handed to every part.
export { createRouterMetrics, type RouterMetrics } from './router-metrics.ts';
