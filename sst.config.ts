/// <reference path="./.sst/platform/config.d.ts" />
export default $config({
  app(input) {
    return { name: 'browserfn', removal: input?.stage === 'production' ? 'retain' : 'remove', home: 'aws' };
  },
  async run() {
    const bucket = new sst.aws.Bucket('Evidence');
    return { bucket: bucket.name };
  },
});
