import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { CONSUMER_METRICS, SERVICE_DIMENSION } from '../lambda/core/consumer-metrics.js';

/** The consumer publishes its counts once per invocation; the alarms sum them per minute. */
const PERIOD = Duration.minutes(1);

type ConsumerMetricName = Exclude<keyof typeof CONSUMER_METRICS, 'namespace' | 'service'>;

/**
 * One of the counts the consumer publishes (EMF, lambda/core/consumer-metrics.ts): by default its
 * sum over a minute. Namespace, name and `service` dimension come from CONSUMER_METRICS, so the
 * code and the alarms cannot disagree.
 */
export function consumerMetric(name: ConsumerMetricName, options?: cloudwatch.MetricOptions): cloudwatch.Metric {
  return new cloudwatch.Metric({
    namespace: CONSUMER_METRICS.namespace,
    metricName: CONSUMER_METRICS[name],
    dimensionsMap: { [SERVICE_DIMENSION]: CONSUMER_METRICS.service },
    statistic: cloudwatch.Stats.SUM,
    period: PERIOD,
    ...options,
  });
}
