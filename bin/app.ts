import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { Deployment, loadProcessConfig } from '../lambda/config.js';
import { OrderedWebhooksStack } from '../lib/ordered-webhooks-stack.js';

const app = new App();
// One user of the OrderedWebhooks construct: its settings read from the environment (README, Configuration).
new OrderedWebhooksStack(app, 'OrderedWebhooks', { config: loadProcessConfig(Deployment.deployed) });
// cdk-nag findings fail the synthesis; an exception needs a written acknowledgement.
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
