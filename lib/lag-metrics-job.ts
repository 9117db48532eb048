import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as events from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { Construct } from 'constructs';
import { LAG_METRICS } from '../lambda/core/lag.js';
import { HandlerFunction } from './handler-function.js';

/** How often the lag job runs, and so the period of the metrics it publishes. */
const LAG_JOB_INTERVAL = Duration.minutes(1);

/** Properties of {@link LagMetricsJob}. */
export interface LagMetricsJobProps {
  /** Environment the handler rebuilds its Config from (`toEnvironment(config)`). */
  readonly environment: Readonly<Record<string, string>>;
}

/**
 * The lag job: the `lagMetrics` function, run every minute by an EventBridge rule, publishing the
 * metrics of LAG_METRICS as embedded-metric-format log lines (Powertools Metrics), so it needs no
 * `cloudwatch:PutMetricData`. Its namespace and `service` dimension come from LAG_METRICS, in its
 * environment and in the metrics below alike, so the code and the alarms cannot disagree.
 *
 * A failed run is not retried: a retry would publish a stale view after the next run's fresh one.
 */
export class LagMetricsJob extends Construct {
  readonly handler: HandlerFunction;
  readonly rule: events.Rule;

  constructor(scope: Construct, id: string, props: LagMetricsJobProps) {
    super(scope, id);

    this.handler = new HandlerFunction(this, 'Handler', {
      handler: 'lagMetrics',
      environment: { ...props.environment, POWERTOOLS_METRICS_NAMESPACE: LAG_METRICS.namespace },
      // Within the interval, so runs do not pile up behind a slow one.
      timeout: LAG_JOB_INTERVAL,
    });
    // EventBridge invokes asynchronously; Lambda would retry a failed run twice, for up to 6 hours.
    this.handler.function.configureAsyncInvoke({ retryAttempts: 0, maxEventAge: LAG_JOB_INTERVAL });

    this.rule = new events.Rule(this, 'Schedule', {
      description: 'Runs the lag job, which publishes the lag metrics of the message groups',
      schedule: events.Schedule.rate(LAG_JOB_INTERVAL),
      targets: [new LambdaFunction(this.handler.function, { retryAttempts: 0 })],
    });
  }

  /** The longest any pending event of any message group has waited, in seconds. */
  metricMaxOldestWaitSeconds(options?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(LAG_METRICS.maxOldestWaitSeconds, options);
  }

  /** Message groups whose head has been failing for longer than the stall threshold. */
  metricStalledGroups(options?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(LAG_METRICS.stalledGroups, options);
  }

  /** Keys falling behind: fed at least as fast as they deliver at their ceiling, waiting past the threshold. */
  metricFallingBehindKeys(options?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(LAG_METRICS.fallingBehindKeys, options);
  }

  /** Message groups held for paused subscriptions. */
  metricHeldGroups(options?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(LAG_METRICS.heldGroups, options);
  }

  /** The longest any held group's oldest event has waited, in seconds: SQS drops it at 14 days. */
  metricOldestHeldSeconds(options?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(LAG_METRICS.oldestHeldSeconds, options);
  }

  /** Pending events over all message groups. */
  metricBacklog(options?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(LAG_METRICS.backlog, options);
  }

  /** One of the job's gauges: by default its maximum over one run's interval. */
  private metric(metricName: string, options?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: LAG_METRICS.namespace,
      metricName,
      // Powertools Metrics adds the service name as the `service` dimension.
      dimensionsMap: { service: LAG_METRICS.service },
      statistic: cloudwatch.Stats.MAXIMUM,
      period: LAG_JOB_INTERVAL,
      ...options,
    });
  }
}
