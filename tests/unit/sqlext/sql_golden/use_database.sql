USE analytics
